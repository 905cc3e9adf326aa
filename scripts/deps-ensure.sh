#!/usr/bin/env bash
# Installs dependencies exactly as package-lock.json pins them, once per lock change.
# better-sqlite3 12 compiles from source on Node 20 (about a minute), and a whole `npm ci`
# takes about three, so the result is also kept in this machine's cache (one copy per lock,
# Node version and architecture; the two most recent are kept): the next clone of the same
# lock copies it (seconds) instead of installing again. MINI_AGENT_CACHE_DIR moves the cache;
# MINI_AGENT_DEPS_CACHE=off skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.mini-agent-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

cache_root="${MINI_AGENT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mini-agent}/deps"
key=$(printf '%s %s %s\n' "$want" "$(node --version)" "$(uname -m)" | sha256sum | cut -c1-24)
cached="$cache_root/$key"
use_cache=true
[ "${MINI_AGENT_DEPS_CACHE:-on}" = off ] && use_cache=false

# A copy is complete only once its stamp is in it (written last, below), so a copy cut short is never used.
if $use_cache && [ -f "$cached/node_modules/.mini-agent-lock.sha256" ] && [ "$(cat "$cached/node_modules/.mini-agent-lock.sha256")" = "$want" ]; then
  echo "deps: node_modules copied from this machine's cache ($cached): same package-lock.json, Node and architecture"
  rm -rf node_modules.mini-agent-tmp
  cp -a "$cached/node_modules" node_modules.mini-agent-tmp
  rm -rf node_modules
  mv node_modules.mini-agent-tmp node_modules
  touch "$cached"
  exit 0
fi

echo "deps: npm ci (package-lock.json changed or node_modules missing)"
npm ci --no-audit --no-fund

if $use_cache; then
  # Kept before the stamp goes in and before anything (a test run, vitest's cache) writes into the tree.
  mkdir -p "$cache_root"
  tmp=$(mktemp -d "$cache_root/.incoming-XXXXXX")
  if cp -a node_modules "$tmp/node_modules" && echo "$want" >"$tmp/node_modules/.mini-agent-lock.sha256"; then
    rm -rf "$cached"
    mv "$tmp" "$cached" || rm -rf "$tmp"
    # the two most recently used copies stay; older locks' copies go
    ls -1dt "$cache_root"/*/ 2>/dev/null | tail -n +3 | xargs -r rm -rf
    echo "deps: kept a copy for the next clone of this lock ($cached)"
  else
    rm -rf "$tmp"
    echo "deps: could not keep a copy in $cache_root (installing went fine; the next clone installs again)" >&2
  fi
fi
echo "$want" >"$stamp"
