#!/usr/bin/env bash
# centrifugo_bench.sh runs the side-by-side of docs/BENCHMARKS.md "How far
# one node goes": SUBS idle subscribed connections (default 17,500) to a
# fresh gateway (rwload fanout, scenario (r)'s mix, no writes) and to a
# fresh Centrifugo (rwload centrifugo-idle: a quarter on one shared
# channel, the rest each on its own), interleaved, RUNS times; memory per
# connection after a garbage collection in each. Everything listens on
# 127.0.0.1; every process it starts is stopped by its PID.
#
#	CENTRIFUGO=/path/to/centrifugo loadtest/centrifugo_bench.sh
#
# Without CENTRIFUGO it builds Centrifugo from source at the pinned version
# (go install github.com/centrifugal/centrifugo/v6@v6.9.1: several minutes).
# Environment: RUNS (default 2), SUBS (default 17500), PORT (gateway,
# default 18110), CPORT (Centrifugo, default 18200).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-2}
SUBS=${SUBS:-17500}
PORT=${PORT:-18110}
PPORT=$((PORT + 1))
CPORT=${CPORT:-18200}
URL=http://127.0.0.1:$PORT
source loadtest/bench_lib.sh

CF=${CENTRIFUGO:-}
if [ -z "$CF" ]; then
	GOBIN="$work/bin" go install github.com/centrifugal/centrifugo/v6@v6.9.1
	CF="$work/bin/centrifugo"
fi
# Insecure client mode: connections need no token and may subscribe to any
# channel (authentication is not what is measured); pprof on the client
# port, for the garbage collection before each RSS reading.
cat >"$work/centrifugo.json" <<JSON
{"http_server": {"address": "127.0.0.1", "port": $CPORT},
 "client": {"insecure": true, "allowed_origins": ["*"]},
 "debug": {"enabled": true}, "usage_stats": {"disabled": true}, "log": {"level": "error"}}
JSON

centrifugo_run() {
	"$CF" --config "$work/centrifugo.json" 2>"$work/cf.log" &
	RS=$! # stopped by cleanup too
	for _ in $(seq 300); do curl -fs "http://127.0.0.1:$CPORT/health" >/dev/null 2>&1 && break; sleep 0.1; done
	"$work/rwload" centrifugo-idle -url "ws://127.0.0.1:$CPORT/connection/websocket" -conns "$SUBS" -pid "$RS" \
		-pprof "127.0.0.1:$CPORT" -hold 10s
	kill "$RS"
	wait "$RS" || true
	RS=""
}

for i in $(seq "$RUNS"); do
	echo "== rankwire: $SUBS idle connections, mixed views, run $i"
	start_gw --push-interval 100ms --pprof "127.0.0.1:$PPORT"
	"$work/rwload" fanout -url "$URL" -keys "$work/keys.json" -pid "$GW" -pprof "127.0.0.1:$PPORT" -q \
		-board reach -subs "$SUBS" -top 1 -around 1 -rank 1 -members-views 1 -members 100000 -rate 0 -d 10s | grep -E "connected in|server:|gateway:"
	stop_gw
	echo "== Centrifugo: $SUBS idle connections, one channel each, run $i"
	centrifugo_run
done
