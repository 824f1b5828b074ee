#!/usr/bin/env bash
# cluster_bench.sh runs the measurements of docs/BENCHMARKS.md "Several
# nodes and fsync" on this machine: durable submissions per second with
# the default (fsync before every ack) against --sync lazy on one embedded
# node, and on a
# 3-node embedded cluster with 1 replica against 3, each single and in
# batches of 100, with Redis as the peer in the same run (AOF fsync every
# second and always). Everything listens on 127.0.0.1 only; every process
# it starts is stopped by its PID.
#
#	loadtest/cluster_bench.sh [sync|sync3|cluster|redis|all]...
#
# Environment: RUNS (default 2), D (duration per run, default 8s), SRC
# (the tree the gateway is built from) or GATEWAY and RWLOAD (binaries
# to use instead of building them); FLOOR=1 adds to each round of `sync`
# the store's floor (hub's BenchmarkPublishFloor: a bare publish of a
# group event, one in flight, with and without fsync), from HUBTEST (a
# binary of `go test -c ./hub`) or built from SRC. Every run of `sync` also
# prints an "account" line (acct_start/acct_stop below) and, unless
# FSYNC_FLOOR=0, each round starts with the disk's fsync floor for the two
# event sizes (loadtest/cmd/fsyncfloor, from FSYNCFLOOR or built from the
# tree this script is in): docs/BENCHMARKS.md, "Where --sync always loses
# against lazy".
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-2}
D=${D:-8s}
PORT=${PORT:-18090}
RPORT=${RPORT:-16390}
URL=http://127.0.0.1:$PORT
source loadtest/bench_lib.sh

load() { "$work/rwload" submit -keys "$work/keys.json" -metrics "" -q -d "$D" "$@"; }
source loadtest/acct_lib.sh

# sync compares the default (fsync before every ack) with --sync lazy on
# one node, interleaved. Each run also counts the gateway's fsync calls
# (perf, when it may trace syscalls) against the events it applied, and
# measures the disk's raw fsync rate (4 KiB O_SYNC writes with dd) in the
# same directory: the floor a write that waits for an fsync cannot pass.
sync_runs() {
	mport=$((PORT + 1))
	for i in $(seq "$RUNS"); do
		echo "== raw fsync, run $i: $(dd if=/dev/zero of="$work/dd" bs=4k count=500 oflag=sync 2>&1 | tail -1)"
		rm -f "$work/dd"
		floor_run
		fsync_floor_run
		for b in 1 100; do
			for s in always lazy; do
				echo "== one node, --sync $s, batch $b, run $i, load $(cut -d" " -f1 /proc/loadavg)"
				start_gw --metrics-addr "127.0.0.1:$mport" --sync "$s"
				perf_start
				acct_start "$GW"
				(load -url "$URL" -clients 64 -batch "$b" && times >"$work/loadcpu.2" && tail -1 "$work/loadcpu.2" >"$work/loadcpu")
				acct_stop "mode=$s batch=$b run=$i"
				perf_stop
				curl -fs "http://127.0.0.1:$mport/metrics" | grep -E '^rankwire_(applied_sequence|submissions_total|publish_duration_seconds_(sum|count))' | tee "$work/metrics" || true
				acct_line
				stop_gw
			done
		done
	done
}

# floor_run runs hub's BenchmarkPublishFloor where FLOOR=1 (see the top).
floor_run() {
	[ "${FLOOR:-}" = 1 ] || return 0
	if [ ! -x "$work/hub.test" ]; then
		if [ -n "${HUBTEST:-}" ]; then cp "$HUBTEST" "$work/hub.test"; else (cd "$SRC" && go test -c -o "$work/hub.test" ./hub); fi
	fi
	echo "== store floor, load $(cut -d" " -f1 /proc/loadavg)"
	(cd "$work" && TMPDIR="$work" ./hub.test -test.run '^$' -test.bench PublishFloor -test.benchtime 1s) | grep '^BenchmarkPublishFloor' || true
	sync # its unsynced writes must not be flushed by the runs after it
}

# fsync_floor_run measures the disk's fsync floor in the data dir's file
# system (see the top) for a single-submission event and a batch event.
fsync_floor_run() {
	[ "${FSYNC_FLOOR:-1}" = 1 ] || return 0
	if [ ! -x "$work/fsyncfloor" ]; then
		if [ -n "${FSYNCFLOOR:-}" ]; then cp "$FSYNCFLOOR" "$work/fsyncfloor"; else go build -o "$work/fsyncfloor" ./loadtest/cmd/fsyncfloor; fi
	fi
	for size in 1400 47000; do
		acct_start ""
		"$work/fsyncfloor" -dir "$work" -size "$size" -d 2s
		acct_stop "fsync-floor size=$size"
		acct_line
	done
}

# CL holds the cluster's gateway PIDs.
CL=()
stop_cluster() {
	for p in "${CL[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${CL[@]}"; do wait "$p" 2>/dev/null || true; done
	CL=()
}

# start_cluster REPLICAS [FLAGS...] starts three embedded nodes on fresh
# data dirs, each with the extra FLAGS.
start_cluster() {
	stop_cluster
	r=$1
	shift
	echo 'a-bench-cluster-secret-0123456789' >"$work/secret"
	routes=nats://127.0.0.1:17221,nats://127.0.0.1:17222,nats://127.0.0.1:17223
	for n in 1 2 3; do
		rm -rf "$work/c$n"
		"$work/gateway" --keys "$work/keys.json" --data "$work/c$n" --addr "127.0.0.1:1809$n" --metrics-addr '' \
			--node "n$n" --cluster bench --cluster-listen "127.0.0.1:1722$n" --routes "$routes" \
			--cluster-secret-file "$work/secret" --replicas "$r" "$@" 2>"$work/c$n.log" &
		CL+=($!)
	done
	for n in 1 2 3; do
		for _ in $(seq 600); do
			curl -fs "http://127.0.0.1:1809$n/readyz" >/dev/null 2>&1 && break
			sleep 0.1
		done
	done
}

cluster_runs() {
	urls=http://127.0.0.1:18091,http://127.0.0.1:18092,http://127.0.0.1:18093
	for i in $(seq "$RUNS"); do
		for r in 1 3; do
			for b in 1 100; do
				echo "== three nodes, --replicas $r, batch $b, run $i"
				start_cluster "$r"
				load -url "$urls" -clients 64 -batch "$b"
				stop_cluster
			done
		done
	done
}

# sync3 compares the default (fsync before every ack) with --sync lazy on
# a 3-node embedded cluster with --replicas 3, interleaved: there an event
# is acknowledged once a majority stored it in its log.
sync3_runs() {
	urls=http://127.0.0.1:18091,http://127.0.0.1:18092,http://127.0.0.1:18093
	for i in $(seq "$RUNS"); do
		for b in 1 100; do
			for s in always lazy; do
				echo "== three nodes, --replicas 3, --sync $s, batch $b, run $i, load $(cut -d" " -f1 /proc/loadavg)"
				start_cluster 3 --sync "$s"
				load -url "$urls" -clients 64 -batch "$b"
				stop_cluster
			done
		done
	done
}

redis_runs() {
	for fs in everysec always; do
		mkdir -p "$work/redis-$fs"
		redis-server --bind 127.0.0.1 --port "$RPORT" --save '' --appendonly yes --appendfsync "$fs" \
			--dir "$work/redis-$fs" --daemonize no --loglevel warning &
		RS=$!
		for _ in $(seq 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
		for i in $(seq "$RUNS"); do
			echo "== redis ZADD, appendfsync $fs, run $i"
			echo "-P 1:   $(redis-benchmark -h 127.0.0.1 -p "$RPORT" -c 64 -n 300000 -r 1000000 -P 1 -t zadd -q | tr '\r' '\n' | grep 'requests per second')"
			echo "-P 100: $(redis-benchmark -h 127.0.0.1 -p "$RPORT" -c 64 -n 2000000 -r 1000000 -P 100 -t zadd -q | tr '\r' '\n' | grep 'requests per second')"
		done
		kill "$RS"
		wait "$RS" || true
		RS=""
	done
}

trap 'stop_cluster; cleanup' EXIT
[ $# -gt 0 ] || set -- all
for mode in "$@"; do
	case "$mode" in
	sync) sync_runs ;;
	sync3) sync3_runs ;;
	cluster) cluster_runs ;;
	redis) redis_runs ;;
	all) sync_runs; cluster_runs; redis_runs ;;
	*) echo "usage: $0 [sync|sync3|cluster|redis|all]..." >&2; exit 2 ;;
	esac
done
