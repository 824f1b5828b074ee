#!/usr/bin/env bash
# reach_bench.sh runs docs/BENCHMARKS.md "100,000 WebSockets on one
# machine" (issue 24): NODES gateway processes of one embedded cluster
# (--replicas 3) on this machine, SUBS WebSockets spread over them in turn
# by rwload fanout (its subscribers in worker processes of at most 9,000
# connections, worker w dialling from 127.0.0.<w+2>), on a lobby-like mix
# (a quarter each on the shared top 10, their own around view of radius 5,
# a single rank, 10 friends) of a 100,000-member board, at RATE
# submissions/s for D. A process here may hold 20,000 files, so a node holds
# at most 18,000 connections (its limit less a tenth). Beside the load,
# `rwload probe` measures the machine's latency floor in the same run (how
# late a 10 ms sleep wakes; a 100-byte loopback ping-pong), per 2 s window
# from the start of rwload fanout (its preload and connect phases come
# first, then the measured writes) and in all; its report is
# $OUT/probe-SUBS-runN.json (its windows in .json.log), rwload fanout's
# progress lines $OUT/fanout-SUBS-runN.log (each line prefixed with the UTC
# time it came), node k's log
# $OUT/nodeK-SUBS-runN.log. Everything listens on
# 127.0.0.1; every process it starts is stopped by its PID.
#
#	loadtest/reach_bench.sh
#
# Environment: RUNS (default 1), NODES (default 6), SUBS (default 100000),
# RATE (default 1000), D (default 20s), CLOSE_RATE (connections rwload
# closes per second at the end; default 0: all at once), MEMBERS (the board's members,
# default 100000: a submission lands in the shared top 10 with odds 10 in
# MEMBERS, so fewer members change it more often), HB (the gateways'
# --heartbeat-interval, default 25s: Centrifugo's ping interval), SYNC (the
# gateways' --sync, default theirs: always), HOLD (default 0: none; how
# long the cluster keeps running after rwload has closed its connections,
# before the script stops it: an election the closes caused then shows apart
# from the stop's own handover of leaderships at SIGTERM), OUT (JSON
# reports; default a directory under /tmp removed at the end), PROFILE (1:
# once the measured phase has begun, wait PROFILE_AT seconds (default 3)
# and take a 10 s CPU profile of the nodes PROFILE_NODES (default "1 2")
# at once, into $OUT/reach-SUBS-runN-nodeK.pprof: node 1 holds top-10 and
# rank views, node 2 around and friends (with six nodes, nodes 1, 3 and 5
# hold every top-10 watcher: the connections take the nodes in turn and
# every fourth is a top-10 watcher); and the CPU profile of every rwload process (the workers and the coordinator)
# over its life, $OUT/worker-SUBS-runN-PID.pprof). BURST_AT (default 10s;
# 0: none): this far into the measured phase, the burst floor
# (docs/BENCHMARKS.md, "Reach: the top view's burst against its floor"):
# bare writers, one per node holding top-10 watchers, write one
# BURST_SIZE-byte frame (default 160, about a top-10 diff) to as many
# sockets of the same rwload workers as watch the top 10, spread the same
# way; rwload reports its latency beside the top view's. BURST_EVERY
# (default 0: once) repeats it while the measured phase lasts.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1}
NODES=${NODES:-6}
SUBS=${SUBS:-100000}
RATE=${RATE:-1000}
D=${D:-20s}
MEMBERS=${MEMBERS:-100000}
CLOSE_RATE=${CLOSE_RATE:-0}
HB=${HB:-25s}
PORT=18120 # node n: HTTP 18120+n, pprof 18130+n, cluster 17230+n; node 1's metrics 18129
URL=http://127.0.0.1:$((PORT + 1))
source loadtest/bench_lib.sh
OUT=${OUT:-$work/out}
mkdir -p "$OUT"

# CL holds the cluster's gateway PIDs (the latency probe's is bench_lib's PROBE).
CL=()
# profile_nodes RUN: see PROFILE above. Runs in the background: waits for
# the first progress line of rwload fanout's measured phase ("1s subs ...")
# in its log.
profile_nodes() {
	for _ in $(seq 1200); do
		grep -Eq '^[0-9:.]+ +[0-9]+s subs' "$OUT/fanout-$SUBS-run$1.log" 2>/dev/null && break
		sleep 0.5
	done
	sleep "${PROFILE_AT:-3}"
	for n in ${PROFILE_NODES:-1 2}; do
		curl -s -o "$OUT/reach-$SUBS-run$1-node$n.pprof" "http://127.0.0.1:$((18130 + n))/debug/pprof/profile?seconds=10" &
	done
	wait
}

# stamp prefixes each line of its input with the UTC time it was read, to
# the millisecond: rwload's progress lines then line up with the nodes' logs.
stamp() {
	local l
	while IFS= read -r l; do printf '%s %s\n' "$(date -u +%H:%M:%S.%3N)" "$l"; done
}

stop_cluster() {
	for p in "${CL[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${CL[@]}"; do wait "$p" 2>/dev/null || true; done
	CL=()
}
trap 'stop_cluster; cleanup' EXIT

# start_cluster starts NODES embedded nodes on fresh data dirs and waits
# for every /readyz.
start_cluster() {
	echo 'a-bench-cluster-secret-0123456789' >"$work/secret"
	local routes="" n
	for n in $(seq "$NODES"); do routes+="${routes:+,}nats://127.0.0.1:$((17230 + n))"; done
	for n in $(seq "$NODES"); do
		rm -rf "$work/c$n"
		local metrics=""
		[ "$n" = 1 ] && metrics=127.0.0.1:18129
		"$work/gateway" --keys "$work/keys.json" --data "$work/c$n" --addr "127.0.0.1:$((PORT + n))" \
			--metrics-addr "$metrics" --pprof "127.0.0.1:$((18130 + n))" --max-connections 1000000 \
			--push-interval 100ms --heartbeat-interval "$HB" ${SYNC:+--sync "$SYNC"} \
			--node "n$n" --cluster bench --cluster-listen "127.0.0.1:$((17230 + n))" --routes "$routes" \
			--cluster-secret-file "$work/secret" --replicas 3 2>"$work/c$n.log" &
		CL+=($!)
	done
	for n in $(seq "$NODES"); do
		for _ in $(seq 1200); do
			curl -fs "http://127.0.0.1:$((PORT + n))/readyz" >/dev/null 2>&1 && break
			sleep 0.1
		done
	done
}

for i in $(seq "$RUNS"); do
	echo "== $SUBS connections over $NODES nodes (--replicas 3), mixed views, $MEMBERS members, $RATE submissions/s, run $i"
	start_cluster
	urls="" nodes=""
	for n in $(seq "$NODES"); do
		urls+="${urls:+,}http://127.0.0.1:$((PORT + n))"
		nodes+="${nodes:+,}${CL[$((n - 1))]}@127.0.0.1:$((18130 + n))"
	done
	probe_start "$OUT/probe-$SUBS-run$i.json" -window 2s
	prof=""
	wprof=""
	if [ "${PROFILE:-0}" = 1 ]; then
		profile_nodes "$i" &
		prof=$!
		wprof="$OUT/worker-$SUBS-run$i"
	fi
	RWLOAD_CPUPROFILE="$wprof" "$work/rwload" fanout -url "$urls" -metrics http://127.0.0.1:18129 -keys "$work/keys.json" -nodes "$nodes" \
		-json -connect-timeout 6m -board reach -subs "$SUBS" -top 1 -around 1 -rank 1 -members-views 1 -members "$MEMBERS" \
		-rate "$RATE" -batch 10 -writers 4 -d "$D" -close-rate "$CLOSE_RATE" -burst-floor-at "${BURST_AT:-10s}" -burst-floor-every "${BURST_EVERY:-0}" -burst-floor-size "${BURST_SIZE:-160}" 2>&1 >"$OUT/reach-$SUBS-run$i.json" | stamp >"$OUT/fanout-$SUBS-run$i.log" || true
	grep -v 'connecting:' "$OUT/fanout-$SUBS-run$i.log" >&2 || true
	probe_stop
	if [ -n "$prof" ]; then wait "$prof" || true; fi
	date -u +'%H:%M:%S.%3N rwload done; the cluster stops after HOLD' >&2
	sleep "${HOLD:-0}"
	for n in $(seq "$NODES"); do
		grep -c . "$work/c$n.log" >/dev/null && tail -n 3 "$work/c$n.log" | sed "s/^/node $n: /" >&2 || true
	done
	stop_cluster
	for n in $(seq "$NODES"); do cp "$work/c$n.log" "$OUT/node$n-$SUBS-run$i.log" 2>/dev/null || true; done
	"$work/rwload" fanout-table <"$OUT/reach-$SUBS-run$i.json" || cat "$OUT/reach-$SUBS-run$i.json"
	jq -c '.nodes[]? | {pid, rss_idle_mib: (.rss_idle/1048576|floor), rss_connected_mib: (.rss_connected/1048576|floor), rss_end_mib: (.rss_end/1048576|floor), cores}' \
		"$OUT/reach-$SUBS-run$i.json"
	jq -r '"phases from the start of fanout: preload \(.preload_seconds|floor) s, connect \(.connect_seconds|floor) s, then \(.elapsed_seconds|floor) s measured"' \
		"$OUT/reach-$SUBS-run$i.json" || true
	cat "$OUT/probe-$SUBS-run$i.json.log"
	probe_line "$OUT/probe-$SUBS-run$i.json"
	# the windows that lie wholly inside the measured phase
	jq -r --slurpfile f "$OUT/reach-$SUBS-run$i.json" '($f[0].preload_seconds + $f[0].connect_seconds) as $a | ($a + $f[0].elapsed_seconds) as $b
		| [.windows[] | select(.at_seconds - 2 >= $a and .at_seconds <= $b + 1)]
		| "probe, the \(length) windows of the measured phase: worst p99 wake-up overshoot \(([.[].wake_overshoot.P99] | max // 0)/1e4|round/100) ms, worst p99 ping-pong \(([.[].ping_pong.P99] | max // 0)/1e4|round/100) ms, max \(([.[].wake_overshoot.Max] | max // 0)/1e4|round/100) / \(([.[].ping_pong.Max] | max // 0)/1e4|round/100) ms"' \
		"$OUT/probe-$SUBS-run$i.json" || true
	uptime
done
