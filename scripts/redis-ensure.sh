#!/usr/bin/env bash
# Starts a Redis for eval fleets (docs/scale-out.md): Debian's redis-server,
# installed when missing, bound to 127.0.0.1 ONLY, with a password, no
# persistence (the queue is the run's working memory; the output folder is the
# record). Used by the fleet tests and by users on one machine.
#
#   REDIS_PASSWORD=... bash scripts/redis-ensure.sh PORT DIR
#   bash scripts/redis-ensure.sh --install-only
#
# Prints the queue URL without the password (redis://127.0.0.1:PORT/0) and the
# pid; the pid is in DIR/redis.pid. Stop it with: kill "$(cat DIR/redis.pid)".
# Workers on other machines need a Redis they can reach: see docs/scale-out.md
# (a TLS listener, rediss://), never this loopback one opened up.
set -euo pipefail
install_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then echo "redis-ensure: redis-server is missing; run as root to install it, or: sudo apt-get install redis-server" >&2; exit 69; fi
    # the package's own service would start on the default port: keep it from starting at install
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d.mini-agent
    had_policy=0; [ -e /usr/sbin/policy-rc.d ] && had_policy=1
    [ "$had_policy" = 0 ] && cp /usr/sbin/policy-rc.d.mini-agent /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
    [ "$had_policy" = 0 ] && rm -f /usr/sbin/policy-rc.d
    rm -f /usr/sbin/policy-rc.d.mini-agent
  fi
}

# --install-only: make sure redis-server is there (npm test does this before the tests), start nothing
if [ "${1:-}" = "--install-only" ]; then
  install_redis
  exit 0
fi

port="${1:?usage: REDIS_PASSWORD=... redis-ensure.sh PORT DIR}"
dir="${2:?usage: REDIS_PASSWORD=... redis-ensure.sh PORT DIR}"
: "${REDIS_PASSWORD:?set REDIS_PASSWORD (Redis refuses clients without it)}"
if ! [[ "$port" =~ ^[0-9]+$ ]] || (( port < 1 || port > 65535 )); then
  echo "redis-ensure: PORT must be 1..65535, not $port" >&2; exit 64
fi

install_redis

mkdir -p "$dir"
chmod 700 "$dir"
# the password goes in a config file (mode 600), never on a command line other users can read in ps
conf="$dir/redis.conf"
umask 077
cat > "$conf" <<CONF
bind 127.0.0.1
protected-mode yes
port $port
requirepass "$REDIS_PASSWORD"
dir $dir
pidfile $dir/redis.pid
logfile $dir/redis.log
daemonize yes
save ""
appendonly no
CONF
redis-server "$conf"
for _ in $(seq 1 100); do
  if [ -s "$dir/redis.pid" ] && REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
    echo "redis://127.0.0.1:$port/0 pid=$(cat "$dir/redis.pid")"
    exit 0
  fi
  sleep 0.1
done
echo "redis-ensure: redis-server did not answer on 127.0.0.1:$port; see $dir/redis.log" >&2
exit 1
