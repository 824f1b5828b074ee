#!/usr/bin/env bash
# reach_bench.sh runs docs/BENCHMARKS.md "100,000 WebSockets on one
# machine" (issue 24): NODES gateway processes of one embedded cluster
# (--replicas 3) on this machine, SUBS WebSockets spread over them in turn
# by rwload fanout (its subscribers in worker processes of at most 9,000
# connections, worker w dialling from 127.0.0.<w+2>), on a lobby-like mix
# (a quarter each on the shared top 10, their own around view of radius 5,
# a single rank, 10 friends) of a 100,000-member board, at RATE
# submissions/s for D. A process here may hold 20,000 files, so a node holds
# at most 18,000 connections (its limit less a tenth). Everything listens on
# 127.0.0.1; every process it starts is stopped by its PID.
#
#	loadtest/reach_bench.sh
#
# Environment: RUNS (default 1), NODES (default 6), SUBS (default 100000),
# RATE (default 1000), D (default 20s), HB (the gateways'
# --heartbeat-interval, default 25s: Centrifugo's ping interval), OUT (JSON
# reports; default a directory under /tmp removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1}
NODES=${NODES:-6}
SUBS=${SUBS:-100000}
RATE=${RATE:-1000}
D=${D:-20s}
HB=${HB:-25s}
PORT=18120 # node n: HTTP 18120+n, pprof 18130+n, cluster 17230+n; node 1's metrics 18129
URL=http://127.0.0.1:$((PORT + 1))
source loadtest/bench_lib.sh
OUT=${OUT:-$work/out}
mkdir -p "$OUT"

# CL holds the cluster's gateway PIDs.
CL=()
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
			--push-interval 100ms --heartbeat-interval "$HB" \
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
	echo "== $SUBS connections over $NODES nodes (--replicas 3), mixed views, 1e5 members, $RATE submissions/s, run $i"
	start_cluster
	urls="" nodes=""
	for n in $(seq "$NODES"); do
		urls+="${urls:+,}http://127.0.0.1:$((PORT + n))"
		nodes+="${nodes:+,}${CL[$((n - 1))]}@127.0.0.1:$((18130 + n))"
	done
	"$work/rwload" fanout -url "$urls" -metrics http://127.0.0.1:18129 -keys "$work/keys.json" -nodes "$nodes" \
		-json -connect-timeout 6m -board reach -subs "$SUBS" -top 1 -around 1 -rank 1 -members-views 1 -members 100000 \
		-rate "$RATE" -batch 10 -writers 4 -d "$D" >"$OUT/reach-$SUBS-run$i.json" || true
	for n in $(seq "$NODES"); do
		grep -c . "$work/c$n.log" >/dev/null && tail -n 3 "$work/c$n.log" | sed "s/^/node $n: /" >&2 || true
	done
	stop_cluster
	"$work/rwload" fanout-table <"$OUT/reach-$SUBS-run$i.json" || cat "$OUT/reach-$SUBS-run$i.json"
	jq -c '.nodes[]? | {pid, rss_idle_mib: (.rss_idle/1048576|floor), rss_connected_mib: (.rss_connected/1048576|floor), rss_end_mib: (.rss_end/1048576|floor), cores}' \
		"$OUT/reach-$SUBS-run$i.json"
done
