#!/usr/bin/env bash
# gateway_bench.sh runs the measurements of docs/BENCHMARKS.md "## Gateway"
# on this machine: a fresh gateway (embedded JetStream) per run on a temp
# data dir, driven by rwload over loopback, and Redis as the peer in the
# same run. Everything listens on 127.0.0.1 only; every process it starts
# is stopped by its PID.
#
#	loadtest/gateway_bench.sh [single|batch|read|redis|restart|all]
#
# Environment: RUNS (default 3), D (duration per run, default 10s),
# PORT (gateway, default 18090), RPORT (redis, default 16390), SRC (the
# source tree the gateway and the hub benchmark are built from, default
# this repo; e.g. a `git archive` of the commit under test).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
D=${D:-10s}
PORT=${PORT:-18090}
RPORT=${RPORT:-16390}
URL=http://127.0.0.1:$PORT
source loadtest/bench_lib.sh

load() { "$work/rwload" "$@" -url "$URL" -keys "$work/keys.json"; }

single() {
	for i in $(seq "$RUNS"); do
		echo "== single, run $i"
		start_gw
		load submit -clients 64 -batch 1 -d "$D" -q
		stop_gw
	done
}

batch() {
	for i in $(seq "$RUNS"); do
		echo "== batch 100, run $i"
		start_gw
		load submit -clients 64 -batch 100 -d "$D" -q
		stop_gw
	done
}

read_load() {
	start_gw
	for i in $(seq "$RUNS"); do
		echo "== read at 1e6 members under 20,000 submissions/s, run $i (preload on run 1 only)"
		load read -members 1000000 -write-rate 20000 -write-batch 100 -write-clients 8 -readers 4 -read-rate 2000 -d "$D"
	done
	echo "== read at 1e6 members, no writes"
	load read -members 1000000 -write-rate 0 -readers 4 -read-rate 2000 -d "$D"
	stop_gw
}

# redis runs the peer: redis-server with RDB off and AOF on (everysec),
# ZADD into one sorted set of up to 1e6 random members, 64 clients,
# unpipelined (as single submissions) and pipelined by 100 (as batches).
redis() {
	mkdir -p "$work/redis"
	redis-server --bind 127.0.0.1 --port "$RPORT" --save '' --appendonly yes --appendfsync everysec \
		--dir "$work/redis" --daemonize no --loglevel warning &
	RS=$!
	for _ in $(seq 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
	for i in $(seq "$RUNS"); do
		echo "== redis ZADD, run $i"
		echo "-P 1:   $(zadd 1000000 1)"
		echo "-P 100: $(zadd 3000000 100)"
	done
	kill "$RS"
	wait "$RS" || true
	RS=""
}

# zadd runs redis-benchmark's ZADD test with n requests pipelined by p and
# prints its summary line.
zadd() {
	redis-benchmark -h 127.0.0.1 -p "$RPORT" -c 64 -n "$1" -r 1000000 -P "$2" -t zadd -q |
		tr '\r' '\n' | grep 'requests per second'
}

restart() {
	(cd "$SRC" && go test ./hub -run '^$' -bench 'Restart/N=1e6' -benchtime "${RUNS}x" -benchmem)
}

case "${1:-all}" in
single) single ;;
batch) batch ;;
read) read_load ;;
redis) redis ;;
restart) restart ;;
all) single; batch; redis; read_load; restart ;;
*) echo "usage: $0 [single|batch|read|redis|restart|all]" >&2; exit 2 ;;
esac
