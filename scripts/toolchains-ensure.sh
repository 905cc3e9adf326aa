#!/usr/bin/env bash
# Makes sure the host has the Debian packages an image family is assembled from
# (sandbox-image/definitions.ts, `hostPackages`), e.g. python3-pytest or golang-go.
# Idempotent: installed packages are left alone. As root on Debian the missing ones
# are installed with apt-get; anywhere else it says what to install and exits 1.
# Called by the image build for the families that need it, never for node.
set -euo pipefail
if [ "$#" -eq 0 ]; then
  echo "usage: toolchains-ensure.sh DEBIAN_PACKAGE..." >&2
  exit 64
fi
missing=()
for pkg in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "toolchains: the host lacks ${missing[*]}; install them (Debian: apt-get install -y ${missing[*]}) and build again" >&2
  exit 1
fi
echo "toolchains: apt-get install ${missing[*]}" >&2
# the package lists may be missing or old on a fresh machine; one update, then the install
DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
