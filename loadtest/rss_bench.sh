#!/usr/bin/env bash
# rss_bench.sh runs docs/BENCHMARKS.md "Memory per connection": one gateway
# process (a fresh data dir, --push-interval 100ms) holding SUBS subscribed
# WebSockets of the lobby-like mix of "How far one node goes" (a quarter
# each on the shared top 10, their own around view of radius 5, a single
# rank, 10 friends; a 100,000-member board), idle for D, then RSS, Go heap
# and goroutine stacks per connection from `rwload fanout` (its memory is
# read after a collection the gateway runs through --pprof). With
# GATEWAYS="A B ..." (binaries), each run starts each binary in turn, so the
# builds under comparison are measured interleaved in one sitting. With
# HEAP=1 it keeps a heap profile (inuse, after a collection) and the
# goroutine profile of each run in $OUT. Everything listens on 127.0.0.1;
# every process it starts is stopped by its PID.
#
#	GATEWAYS="/tmp/gw-main /tmp/gw-branch" RUNS=2 loadtest/rss_bench.sh
#
# Environment: GATEWAYS (default: one build of this tree), RUNS (default 1),
# SUBS (default 17500: the gateway keeps its 20,000-file limit less a tenth
# for connections, and the load's HTTP connections need a few), D (default
# 5s), RATE (submissions/s while measured, default 0: idle), OUT (default a
# directory under /tmp, removed at the end), GWFLAGS (more gateway flags).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-18140}
PPORT=$((PORT + 1))
MPORT=$((PORT + 2))
URL=http://127.0.0.1:$PORT
RUNS=${RUNS:-1}
SUBS=${SUBS:-17500}
D=${D:-5s}
RATE=${RATE:-0}
source loadtest/bench_lib.sh
OUT=${OUT:-$work/out}
mkdir -p "$OUT"
GATEWAYS=${GATEWAYS:-$work/gateway}

# heap_profile NAME waits for rwload's first progress line of the measured
# phase in $OUT/NAME.log, then keeps the gateway's heap (after a
# collection) and goroutine profiles.
heap_profile() {
	for _ in $(seq 1200); do
		grep -Eq '^ *[0-9]+s subs' "$OUT/$1.log" 2>/dev/null && break
		sleep 0.25
	done
	curl -s -o "$OUT/$1.heap" "http://127.0.0.1:$PPORT/debug/pprof/heap?gc=1"
	curl -s -o "$OUT/$1.goroutine" "http://127.0.0.1:$PPORT/debug/pprof/goroutine"
}

for i in $(seq "$RUNS"); do
	g=0
	for bin in $GATEWAYS; do
		g=$((g + 1))
		name="rss-$SUBS-gw$g-run$i"
		echo "== $SUBS connections, mixed views, $RATE submissions/s, gateway $g ($bin), run $i"
		GWBIN=$bin start_gw --push-interval 100ms --pprof "127.0.0.1:$PPORT" --metrics-addr "127.0.0.1:$MPORT" ${GWFLAGS:-}
		prof=""
		if [ "${HEAP:-0}" = 1 ]; then
			heap_profile "$name" &
			prof=$!
		fi
		"$work/rwload" fanout -url "$URL" -keys "$work/keys.json" -pid "$GW" -pprof "127.0.0.1:$PPORT" \
			-metrics "http://127.0.0.1:$MPORT" -json -board reach -subs "$SUBS" -top 1 -around 1 -rank 1 \
			-members-views 1 -members 100000 -rate "$RATE" -batch 10 -writers 2 -d "$D" \
			>"$OUT/$name.json" 2>"$OUT/$name.log" || true
		if [ -n "$prof" ]; then wait "$prof" || true; fi
		stop_gw
		jq -r '"  RSS per connection \(.rss_per_connection/1024*10|round/10) KiB (heap \(((.heap_inuse_connected-.heap_inuse_idle)/'"$SUBS"'/1024*10)|round/10), stack \(((.stack_inuse_connected-.stack_inuse_idle)/'"$SUBS"'/1024*10)|round/10) KiB); goroutines \(.goroutines_idle) -> \(.goroutines_connected); RSS \(.rss_idle/1048576|round) -> \(.rss_connected/1048576|round) -> \(.rss_end/1048576|round) MiB; server \(.server_cores*100|round/100) cores, \(.cpu_per_message_micros // 0) us/msg"' \
			"$OUT/$name.json" || tail -n 5 "$OUT/$name.log"
	done
done
uptime
