#!/usr/bin/env bash
# fanout_bench.sh runs the measurements of docs/BENCHMARKS.md "## Fan-out"
# on this machine: a fresh gateway (--push-interval 100ms, embedded
# JetStream, a key file from rwload keygen) per run, driven by
# `rwload fanout` over loopback; Redis pub/sub as the peer in the same
# session. Everything listens on 127.0.0.1; every process it starts is
# stopped by its PID. JSON results go to $OUT (one file per run), from
# which loadtest/chart draws docs/fanout.png.
#
#	loadtest/fanout_bench.sh [a|a0|b|c|d|f|l|m|r|s|all]
#
# Environment: RUNS (default 2), D (measured duration, default 20s), PORT
# (gateway, default 18110), RPORT (redis, default 16391), SRC (the source
# tree the gateway is built from, default this repo; e.g. a `git archive`
# of the commit under test), OUT (default loadtest/chart/results), SIZES_B
# (subscribers for (b), default "1000 10000 18000"), RATE_B (submissions/s
# for (b), default 5000), PROFILE (1: take a
# 10 s CPU profile of the gateway PROFILE_AT seconds (default 20) into
# each run, into $OUT; PROFILE_KIND=heap takes a heap profile instead).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-2}
D=${D:-20s}
PORT=${PORT:-18110}
PPORT=$((PORT + 1))
RPORT=${RPORT:-16391}
OUT=$(mkdir -p "${OUT:-loadtest/chart/results}" && cd "${OUT:-loadtest/chart/results}" && pwd)
SIZES_B=${SIZES_B:-1000 10000 18000}
URL=http://127.0.0.1:$PORT
source loadtest/bench_lib.sh
start_fanout_gw() { start_gw --push-interval 100ms --pprof "127.0.0.1:$PPORT"; }

# fanout NAME ARGS... runs rwload fanout against the gateway (or with
# -redis, the peer), writes $OUT/NAME.json and prints the table.
fanout() {
	local name=$1 pid=${SERVER_PID:-$GW} prof=""
	shift
	if [ "${PROFILE:-0}" = 1 ] && [ -z "${SERVER_PID:-}" ]; then
		(sleep "${PROFILE_AT:-20}" && curl -s -o "$OUT/$name.pprof" "http://127.0.0.1:$PPORT/debug/pprof/${PROFILE_KIND:-profile?seconds=10}") &
		prof=$!
	fi
	local gc=()
	[ -z "${SERVER_PID:-}" ] && gc=(-pprof "127.0.0.1:$PPORT") # memory after a GC
	"$work/rwload" fanout -url "$URL" -keys "$work/keys.json" -pid "$pid" -d "$D" -q -json "${gc[@]}" "$@" >"$OUT/$name.json"
	"$work/rwload" fanout-table <"$OUT/$name.json" || cat "$OUT/$name.json"
	if [ -n "$prof" ]; then wait "$prof" || true; fi
}

# (a) 10,000 subscribers on one top-10 view, 10,000 submissions/s.
scenario_a() {
	for i in $(seq "$RUNS"); do
		echo "== (a) 10,000 × top-10, 10,000 submissions/s, run $i"
		start_fanout_gw
		fanout "a-10000-run$i" -board lobby -subs 10000 -top 1 -members 1000 -rate 10000 -batch 250 -writers 16
		stop_gw
	done
}

# (l) (a)'s 10,000 subscriptions as a lobby page would hold them: 2,500
# connections of 4 subscriptions each, all on the same top-10 view.
scenario_l() {
	for i in $(seq "$RUNS"); do
		echo "== (l) 2,500 connections × 4 top-10 subscriptions, 10,000 submissions/s, run $i"
		start_fanout_gw
		fanout "l-10000-run$i" -board lobby -subs 10000 -per-conn 4 -top 1 -members 1000 -rate 10000 -batch 250 -writers 16
		stop_gw
	done
}

# (s) (a) with 1,000 more connections that never read (small receive
# windows, so that they stall within seconds); 60 s, so that the gateway's
# 10 s slow timeout closes them during the run.
scenario_s() {
	for i in $(seq "$RUNS"); do
		echo "== (s) 10,000 × top-10 and 1,000 that never read, 10,000 submissions/s, run $i"
		start_fanout_gw
		fanout "s-10000-run$i" -board lobby -subs 10000 -stalled 1000 -top 1 -members 1000 -rate 10000 -batch 250 -writers 16 -d 60s
		stop_gw
	done
}

# (a0) (a)'s writes with 100 subscribers: the gateway's CPU for taking
# 10,000 submissions/s, to subtract from (a)'s for the cost of delivery.
scenario_a0() {
	for i in $(seq "$RUNS"); do
		echo "== (a0) 100 × top-10, 10,000 submissions/s, run $i"
		start_fanout_gw
		fanout "a0-100-run$i" -board lobby -subs 100 -top 1 -members 1000 -rate 10000 -batch 250 -writers 16
		stop_gw
	done
}

# (b) S subscribers each on its own around view (radius 5) of a 1,000,000-
# member board, 5,000 submissions/s (RATE_B); one gateway per size and run.
scenario_b() {
	local rate=${RATE_B:-5000} tag=""
	[ "$rate" != 5000 ] && tag="-r$rate"
	for s in $SIZES_B; do
		for i in $(seq "$RUNS"); do
			echo "== (b) $s × around (radius 5), 1e6 members, $rate submissions/s, run $i"
			start_fanout_gw
			fanout "b-$s$tag-run$i" -board big -subs "$s" -around 1 -radius 5 -members 1000000 -rate "$rate" -batch 100 -writers 8
			stop_gw
		done
	done
}

# (m) issue 6's target shape: 18,000 subscribers, a quarter each on the
# shared top 10, their own around (radius 5), a single rank and a
# 10-member friends view, of a 100,000-member board; 10,000 submissions/s.
scenario_m() {
	local subs=${SUBS:-18000} # the gateway's connection budget (RLIMIT_NOFILE less a tenth) must hold them and the writers
	for i in $(seq "$RUNS"); do
		echo "== (m) $subs × mixed views, 1e5 members, 10,000 submissions/s, run $i"
		start_fanout_gw
		fanout "m-$subs-run$i" -board mixed -subs "$subs" -top 1 -around 1 -rank 1 -members-views 1 -members 100000 \
			-rate 10000 -batch 250 -writers 16
		stop_gw
	done
}

# (r) a node's reach (issue 24): SUBS_R connections (default 17,500: what
# the connection budget, RLIMIT_NOFILE less a tenth, holds beside the
# writers) on a lobby-like mix (a quarter each on the shared top 10, their
# own around, a single rank, 10 friends) of a 100,000-member board: idle,
# then at 1,000 submissions/s. RSS per idle and per watching connection
# and CPU per delivered message: the measured floor of the 100,000
# projection in docs/BENCHMARKS.md.
scenario_r() {
	local subs=${SUBS_R:-17500}
	for i in $(seq "$RUNS"); do
		echo "== (r) $subs idle connections, mixed views, 1e5 members, run $i"
		start_fanout_gw
		fanout "r-idle-$subs-run$i" -board reach -subs "$subs" -top 1 -around 1 -rank 1 -members-views 1 -members 100000 -rate 0 -d 5s
		stop_gw
		echo "== (r) $subs connections, mixed views, 1e5 members, 1,000 submissions/s, run $i"
		start_fanout_gw
		fanout "r-1000-$subs-run$i" -board reach -subs "$subs" -top 1 -around 1 -rank 1 -members-views 1 -members 100000 \
			-rate 1000 -batch 10 -writers 4
		stop_gw
	done
}

# (c) 10,000 idle subscribers, one top-10 subscription each, no writes.
scenario_c() {
	for i in $(seq "$RUNS"); do
		echo "== (c) 10,000 idle subscribers, run $i"
		start_fanout_gw
		fanout "c-10000-run$i" -board idle -subs 10000 -top 1 -members 1000 -rate 0 -d 5s
		stop_gw
	done
}

# (d) the peer: (a)'s shape on Redis pub/sub. RDB and AOF off; protected
# mode off because subscribers dial from 127.0.0.2+, which Redis does not
# count as local (it listens on 127.0.0.1 only).
scenario_d() {
	mkdir -p "$work/redis"
	redis-server --bind 127.0.0.1 --port "$RPORT" --save '' --appendonly no --protected-mode no --maxclients 19000 \
		--dir "$work/redis" --daemonize no --loglevel warning &
	RS=$!
	for _ in $(seq 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
	for i in $(seq "$RUNS"); do
		echo "== (d) Redis pub/sub, 10,000 subscribers of the top-10 JSON, 10,000 submissions/s, run $i"
		SERVER_PID=$RS fanout "d-10000-run$i" -redis "127.0.0.1:$RPORT" -board lobby$i -subs 10000 \
			-members 1000 -rate 10000 -batch 250 -writers 16
	done
	kill "$RS"
	wait "$RS" || true
	RS=""
}

# (f) the floor: no server, a bare write(2) of 600 bytes per connection per
# 100 ms to 10,000 loopback connections of a sink process (rwload floor):
# the least CPU any fan-out server pays per message on this machine.
scenario_f() {
	for i in $(seq "$RUNS"); do
		echo "== (f) the floor: 10,000 connections, 600 bytes each per 100 ms, run $i"
		"$work/rwload" floor -conns 10000 -size 600 -interval 100ms -d "$D" | tee "$OUT/f-10000-run$i.txt"
	done
}

case "${1:-all}" in
a) scenario_a ;;
a0) scenario_a0 ;;
l) scenario_l ;;
s) scenario_s ;;
b) scenario_b ;;
c) scenario_c ;;
d) scenario_d ;;
f) scenario_f ;;
m) scenario_m ;;
r) scenario_r ;;
all) scenario_a; scenario_a0; scenario_l; scenario_s; scenario_c; scenario_b; scenario_d; scenario_f; scenario_m ;;
*) echo "usage: $0 [a|a0|b|c|d|f|l|m|r|s|all]" >&2; exit 2 ;;
esac
