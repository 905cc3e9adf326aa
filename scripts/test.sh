#!/usr/bin/env bash
# The README's test command (`npm test`): works on a fresh clone.
# 1. a reachable Docker engine (installed and started when we are root on Debian),
# 2. dependencies exactly as locked, 3. the compiled bins, 4. the pinned sandbox image,
# 5. every test tier, 6. proof that nothing labelled mini-agent was left behind.
set -euo pipefail
cd "$(dirname "$0")/.."
export TESTCONTAINERS_RYUK_DISABLED=true

bash scripts/docker-ensure.sh
bash scripts/deps-ensure.sh
# the HTML eval report is tested in a real headless chromium (tests/kit/cdp.ts)
bash scripts/chromium-ensure.sh
# eval fleets are tested against a real Redis on 127.0.0.1 (tests/fleet/; each test starts its own)
bash scripts/redis-ensure.sh --install-only
# every sandbox image family, built once into one lock; test files pin from it instead of rebuilding
# (tests/kit/sandbox-image.ts). python and go first install their toolchains (scripts/toolchains-ensure.sh).
# Started now, beside the steps below: a build mostly waits on the engine and the go family's seed
# compile, the compile and lint steps on the CPU, so overlapped they take about as long as the
# longest of them instead of the sum (measured: go alone about 3.5 min on a busy 2-core host).
# One family after another, since all three write the same lock file; after the other installs,
# since toolchains-ensure.sh's apt-get would not wait for their dpkg lock.
images=$(mktemp -d)
# --all: every built-in family (the one list, contracts/sandbox.ts), one after another into one lock
npm run --silent image:build -- --all --state-dir "$images" --quiet >"$images/build.log" 2>&1 &
images_pid=$!
# whichever way this script ends, no image build runs on after it
trap 'wait "$images_pid" 2>/dev/null || true' EXIT
npm run --silent build
# the spawned daemon and client tests start the bins just built, as users run them (tests/e2e/harness.ts)
export MINI_AGENT_TEST_BINS=dist
# the tests are type-checked too (vitest itself only strips types)
npx tsc -p tsconfig.tests.json
# import rules: no cycles, contracts/ imports nothing of ours, sandbox/ never imports runtime/, the walls between
# the programs (docs/architecture.md; .dependency-cruiser.cjs)
npm run --silent lint:imports
# formatting and lint rules (biome.jsonc)
npm run --silent lint
# the image builds finish here; their output is printed once they did
if ! wait "$images_pid"; then
  cat "$images/build.log" >&2
  echo "test: building the sandbox images failed" >&2
  exit 1
fi
cat "$images/build.log"
export MINI_AGENT_TEST_IMAGE_LOCK="$images/sandbox-image.lock.json"

status=0
results=$(mktemp -d)/vitest.json
# each test daemon's state dir by its instance id, so the leftover check names where a leak came from
export MINI_AGENT_TEST_INSTANCES="$(dirname "$results")/instances.tsv"
# what is there already (a daemon this machine runs keeps pool members and layers on purpose) is not the tests'
before="$(dirname "$results")/present-before.txt"
node --import tsx scripts/leftovers.ts --record "$before"
npx vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?
# one plain closing line, whatever the runner printed above it
node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests+r.numTodoTests} skipped`)' "$results" || status=1

# A test that leaks a container or volume is a failure even when its assertions passed.
node --import tsx scripts/leftovers.ts --remove --except "$before" || status=$?
exit "$status"
