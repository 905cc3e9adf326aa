#!/usr/bin/env bash
# The README's main job (`npm run demo`), from a fresh clone:
#   a Docker engine, dependencies, the bins and the pinned sandbox image;
#   a daemon in the background on its own state dir;
#   the isolation probes; the canonical linkcheck fixture through `mini-agent-client run`
#   with its two approvals; the Verifier's verdict and the diff.
# On a terminal the client asks y/N for each write (answer y twice); otherwise the
# script approves the pending action the client named, exactly as a user would type it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# The demo keeps its own state dir, so it never meets a daemon the user already runs.
# Exported: the image build records its pinned digest there, where the daemon looks.
export MINI_AGENT_STATE_DIR=${MINI_AGENT_STATE_DIR:-$root/.state/demo}
state=$MINI_AGENT_STATE_DIR
mkdir -p "$state" && chmod 700 "$state"

bash scripts/docker-ensure.sh
bash scripts/deps-ensure.sh
npm run --silent build
npm run --silent image:build
workspace=$(mktemp -d "${TMPDIR:-/tmp}/mini-agent-demo.XXXXXX")/linkcheck
client() { node "$root/dist/client/src/cli.js" --state-dir "$state" "$@"; }

node "$root/dist/daemon/src/cli.js" --state-dir "$state" >"$state/daemon.out" 2>&1 &
daemon_pid=$!
stop_daemon() { kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true; }
trap stop_daemon EXIT

for _ in $(seq 1 100); do
  client health >/dev/null 2>&1 && break
  kill -0 "$daemon_pid" 2>/dev/null || { echo "demo: the daemon exited:"; cat "$state/daemon.out"; exit 2; }
  sleep 0.2
done
# health exits 2 until a passing isolation report exists; the probes below make one.
client health || true

echo
echo "== isolation probes (a live model would be refused without a fresh passing report)"
client probe

echo
echo "== run: fixtures/linkcheck in a new workspace $workspace"
rc=0
if [ -t 0 ] && [ -t 1 ]; then
  client run --fixture fixtures/linkcheck --workspace "$workspace" || rc=$?
else
  client run --fixture fixtures/linkcheck --workspace "$workspace" || rc=$?
  run_id=$(client list --json | node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8"));const m=r.filter(x=>x.workspace===process.argv[1]);console.log(m[m.length-1]?.run_id??"")' "$workspace")
  approvals=0
  while [ "$rc" -eq 3 ] && [ "$approvals" -lt 5 ]; do
    # status exits 3 while a write awaits approval: that is the answer, not a failure.
    action=$({ client status "$run_id" --json || true; } | node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8"));console.log(r.pending_action_id??r.pending_action?.action_id??"")')
    echo
    echo "== approving $action (no terminal: approving as the printed command says)"
    rc=0
    client approve "$run_id" "$action" || rc=$?
    approvals=$((approvals + 1))
  done
fi

run_id=$(client list --json | node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8"));const m=r.filter(x=>x.workspace===process.argv[1]);console.log(m[m.length-1]?.run_id??"")' "$workspace")
echo
echo "== verdict"
client status "$run_id" || true
echo
echo "== diff against the baseline"
client diff "$run_id"
exit "$rc"
