#!/usr/bin/env bash
# Makes sure a Docker engine is reachable for mini-agent's sandbox.
# - DOCKER_HOST (unix:// or tcp://) or the default socket is tried first.
# - If none answers and we are root on Debian: install docker.io (and runsc
#   when the archive has it), register runsc in /etc/docker/daemon.json
#   (merged, never clobbered), start dockerd in the background with its log in
#   a file, and wait for it (bounded). Otherwise exit non-zero with the reason.
# Idempotent: a second run finds the engine and changes nothing.
# The docker CLI is not used (it may be newer than the engine).
set -euo pipefail

WAIT_SECONDS="${MINI_AGENT_DOCKER_WAIT:-60}"
DOCKERD_LOG="${MINI_AGENT_DOCKERD_LOG:-/var/log/mini-agent-dockerd.log}"
DAEMON_JSON=/etc/docker/daemon.json

say() { echo "docker-ensure: $*"; }

# Prints the engine version and returns 0 when the engine answers /version.
probe_engine() {
  node - <<'JS'
const http = require("node:http");
const host = process.env.DOCKER_HOST || "unix:///var/run/docker.sock";
let opts;
if (host.startsWith("unix://")) opts = { socketPath: host.slice(7), path: "/version" };
else { const u = new URL(host.replace(/^tcp:/, "http:")); opts = { host: u.hostname, port: Number(u.port || 2375), path: "/version" }; }
const req = http.get({ ...opts, timeout: 3000 }, (res) => {
  let body = "";
  res.on("data", (d) => (body += d));
  res.on("end", () => {
    try { const v = JSON.parse(body); console.log(`${v.Version} (API ${v.ApiVersion})`); process.exit(res.statusCode === 200 ? 0 : 1); }
    catch { process.exit(1); }
  });
});
req.on("timeout", () => { req.destroy(); process.exit(1); });
req.on("error", () => process.exit(1));
JS
}

# Adds runsc to daemon.json when it is installed and not registered yet; keeps every other key.
register_runsc() {
  local runsc_path
  runsc_path="$(command -v runsc || true)"
  [ -n "$runsc_path" ] || { say "runsc not installed; only runc will be available"; return 0; }
  mkdir -p /etc/docker
  RUNSC_PATH="$runsc_path" DAEMON_JSON="$DAEMON_JSON" node - <<'JS'
const fs = require("node:fs");
const file = process.env.DAEMON_JSON;
let cfg = {};
if (fs.existsSync(file)) {
  try { cfg = JSON.parse(fs.readFileSync(file, "utf8") || "{}"); }
  catch (e) { console.error(`docker-ensure: ${file} is not valid JSON; not touching it`); process.exit(0); }
}
cfg.runtimes = cfg.runtimes || {};
if (cfg.runtimes.runsc) {
  const args = cfg.runtimes.runsc.runtimeArgs || [];
  console.log(`docker-ensure: runsc already registered (${JSON.stringify(args)}); left as is`);
  if (!args.includes("--oci-seccomp")) console.log("docker-ensure: note: without --oci-seccomp gVisor ignores the container's seccomp profile (the seccomp probes fail on runsc)");
  process.exit(0);
}
// --network=none: gVisor's own netstack off; --oci-seccomp: apply the container's seccomp profile inside gVisor
cfg.runtimes.runsc = { path: process.env.RUNSC_PATH, runtimeArgs: ["--network=none", "--oci-seccomp"] };
fs.writeFileSync(file + ".tmp", JSON.stringify(cfg, null, 2) + "\n");
fs.renameSync(file + ".tmp", file);
console.log(`docker-ensure: registered runsc in ${file}`);
JS
}

if version="$(probe_engine)"; then
  say "engine reachable at ${DOCKER_HOST:-unix:///var/run/docker.sock}: Docker $version; nothing to do"
  exit 0
fi

if [ -n "${DOCKER_HOST:-}" ]; then
  say "DOCKER_HOST=$DOCKER_HOST does not answer; not starting a local engine in its place" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  say "no Docker engine reachable at /var/run/docker.sock, and installing one needs root on Debian; start Docker yourself and re-run" >&2
  exit 1
fi

if ! command -v dockerd >/dev/null 2>&1; then
  say "installing docker.io (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq docker.io >/dev/null
  if apt-cache show runsc >/dev/null 2>&1; then
    say "installing runsc (gVisor)"
    apt-get install -y -qq runsc >/dev/null || say "runsc could not be installed; continuing with runc"
  fi
else
  say "dockerd is installed but not answering"
fi

register_runsc

if pgrep -x dockerd >/dev/null 2>&1; then
  say "a dockerd process exists but does not answer; waiting for it"
else
  say "starting dockerd in the background (log: $DOCKERD_LOG)"
  nohup dockerd >>"$DOCKERD_LOG" 2>&1 &
fi

for _ in $(seq 1 "$WAIT_SECONDS"); do
  if version="$(probe_engine)"; then
    say "engine up: Docker $version"
    exit 0
  fi
  sleep 1
done
say "dockerd did not answer within ${WAIT_SECONDS}s; see $DOCKERD_LOG" >&2
tail -n 20 "$DOCKERD_LOG" >&2 || true
exit 1
