#!/usr/bin/env bash
# Installs dependencies exactly as package-lock.json pins them, once per lock change.
# better-sqlite3 12 compiles from source on Node 20 (about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.mini-agent-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "deps: npm ci (package-lock.json changed or node_modules missing)"
npm ci --no-audit --no-fund
echo "$want" > "$stamp"
