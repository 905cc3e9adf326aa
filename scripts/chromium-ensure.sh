#!/usr/bin/env bash
# Makes sure Debian's `chromium` is on the host: the HTML eval report is tested in
# a real headless browser (tests/kit/cdp.ts). Idempotent: found, nothing changes.
# As root on Debian a missing chromium is installed with apt-get; anywhere else it
# says what to install and exits 1 (the browser test then fails with the same hint).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium-ensure: chromium is missing; install it (Debian: apt-get install -y chromium) and test again" >&2
  exit 1
fi
echo "chromium-ensure: apt-get install chromium" >&2
# other installs may hold the dpkg lock for a while (toolchains-ensure.sh): wait for it instead of failing
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >&2
command -v chromium >/dev/null 2>&1
