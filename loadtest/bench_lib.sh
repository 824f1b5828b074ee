# bench_lib.sh is sourced by gateway_bench.sh and fanout_bench.sh: the
# work directory and its cleanup, the gateway and rwload builds, the key
# file, and starting and stopping a gateway. The caller sets PORT, URL and,
# optionally, SRC (the tree the gateway is built from) or GATEWAY and
# RWLOAD (binaries to copy instead of building them) before sourcing it.
# Every process started here is stopped by its PID.

work=$(mktemp -d /tmp/rwbench.XXXXXX)
GW=""
RS=""
PROBE=""
cleanup() {
	probe_stop
	[ -n "$GW" ] && kill "$GW" 2>/dev/null && wait "$GW" 2>/dev/null
	[ -n "$RS" ] && kill "$RS" 2>/dev/null && wait "$RS" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

SRC=$(cd "${SRC:-.}" && pwd)
if [ -n "${GATEWAY:-}" ]; then # a binary built before, for runs interleaved with another tree's
	cp "$GATEWAY" "$work/gateway"
else
	(cd "$SRC" && go build -o "$work/gateway" ./cmd/gateway)
fi
if [ -n "${RWLOAD:-}" ]; then
	cp "$RWLOAD" "$work/rwload"
else
	go build -o "$work/rwload" ./loadtest/cmd/rwload
fi
"$work/rwload" keygen -out "$work/keys.json" -tenant bench -limit 10000000

# start_gw [FLAGS...] starts a gateway ($GWBIN where set, else the one
# built from SRC) with extra FLAGS on a fresh data dir
# and waits (at most 30 s) for /readyz. The benchmarks' one tenant may hold
# every connection (--max-connections past the default of half the
# connection budget; the gateway warns that it may).
start_gw() {
	rm -rf "$work/data"
	"${GWBIN:-$work/gateway}" --keys "$work/keys.json" --data "$work/data" --addr "127.0.0.1:$PORT" --max-connections 1000000 "$@" 2>"$work/gw.log" &
	GW=$!
	for _ in $(seq 300); do
		curl -fs "$URL/readyz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "gateway not ready" >&2
	cat "$work/gw.log" >&2
	return 1
}

stop_gw() {
	kill "$GW"
	wait "$GW" || true
	GW=""
}

# probe_start FILE [FLAGS...] starts `rwload probe` (the machine's latency
# floor: how late a 10 ms sleep wakes, a 100-byte loopback ping-pong, a
# 512-byte append and fsync in the work directory) beside
# a measurement, its JSON report into FILE and its per-window lines (FLAGS,
# e.g. -window 2s) into FILE.log; probe_stop ends it (SIGTERM: it reports
# and exits); probe_line FILE prints the report in one line.
probe_start() {
	local file=$1
	shift
	"$work/rwload" probe -json -sync-dir "$work" "$@" >"$file" 2>"$file.log" &
	PROBE=$!
}

probe_stop() {
	if [ -n "$PROBE" ]; then
		kill -TERM "$PROBE" 2>/dev/null && wait "$PROBE" 2>/dev/null
	fi
	PROBE=""
	return 0
}

probe_line() {
	jq -r '"the floor beside it (\(.seconds|floor) s): 10 ms sleep overshoot p50/p99/max \(.wake_overshoot.P50/1e4|round/100) / \(.wake_overshoot.P99/1e4|round/100) / \(.wake_overshoot.Max/1e4|round/100) ms; 100 B loopback ping-pong \(.ping_pong.P50/1e4|round/100) / \(.ping_pong.P99/1e4|round/100) / \(.ping_pong.Max/1e4|round/100) ms" + (if .fsync then "; 512 B append + fsync (the data dir'"'"'s disk) \(.fsync.P50/1e4|round/100) / \(.fsync.P99/1e4|round/100) / \(.fsync.Max/1e4|round/100) ms" else "" end)' "$1" || true
}
