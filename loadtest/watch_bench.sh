#!/usr/bin/env bash
# watch_bench.sh runs docs/BENCHMARKS.md "Watching shapes beside
# Centrifugo" (issue 24): N subscribers on one top-10 view of a 10-member
# board, 10 submissions/s (every one changes the view), against a fresh
# gateway and against a fresh "Redis + app + Centrifugo" (rwload fanout
# -redis -centrifugo: the writer ZADDs, reads the top 10 back and
# publishes it whole through Centrifugo's server API; the subscribers are
# Centrifugo JSON-protocol clients), with the bare-write floor (rwload
# floor, N connections, 600 B each per 100 ms) in the same loop; the three
# interleaved, RUNS loops per size. The gateway's heartbeats are set to
# Centrifugo's ping interval (25 s), so that neither server's keepalives
# weigh on the figures (rwload counts the gateway's heartbeats as messages
# and not Centrifugo's pings). Two writers on both sides, so that a
# publish Centrifugo answers late does not make the pacer drop the next.
# Beside each server's run, `rwload probe` measures the machine's latency
# floor (how late a 10 ms sleep wakes; a 100-byte loopback ping-pong),
# printed after the run's line. Everything listens on 127.0.0.1; every
# process it starts is stopped by its PID.
#
#	CENTRIFUGO=/path/to/centrifugo loadtest/watch_bench.sh
#
# Without CENTRIFUGO it builds Centrifugo from source at the pinned version
# (go install github.com/centrifugal/centrifugo/v6@v6.9.1: several minutes).
# Environment: RUNS (default 2), D (default 20s), SIZES (default
# "5000 10000"), OUT (JSON reports; default a directory under /tmp that is
# removed at the end unless given), PROFILE (1: a 10 s CPU profile of the
# gateway PROFILE_AT (default 10) s into each of its runs, into $OUT), PORT (gateway, 18110),
# CPORT (Centrifugo, 18200), RPORT (Redis, 16391), GATEWAYS (prebuilt
# gateways to run in turn in each loop, "NAME=PATH ...", e.g.
# "main=/tmp/gw-main after=/tmp/gw-after" for a before/after in one
# sitting; default "rankwire=", the gateway built from SRC), SIDES (which
# sides run, default "floor rankwire centrifugo").
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-2}
D=${D:-20s}
SIZES=${SIZES:-5000 10000}
PORT=${PORT:-18110}
PPORT=$((PORT + 1))
MPORT=$((PORT + 2))
CPORT=${CPORT:-18200}
RPORT=${RPORT:-16391}
URL=http://127.0.0.1:$PORT
source loadtest/bench_lib.sh
OUT=${OUT:-$work/out}
mkdir -p "$OUT"
CS="" # the Centrifugo server's PID, stopped by the trap too
trap '[ -n "$CS" ] && kill "$CS" 2>/dev/null && wait "$CS" 2>/dev/null; cleanup' EXIT

CF=${CENTRIFUGO:-}
if [ -z "$CF" ]; then
	GOBIN="$work/bin" go install github.com/centrifugal/centrifugo/v6@v6.9.1
	CF="$work/bin/centrifugo"
fi
KEY=rwload-bench-key
# Insecure client mode: clients need no token and may subscribe to any
# channel (authentication is not what is measured); the server API takes
# the key; pprof (debug) on the same port; error-level logs.
cat >"$work/centrifugo.json" <<JSON
{"http_server": {"address": "127.0.0.1", "port": $CPORT},
 "client": {"insecure": true, "allowed_origins": ["*"]},
 "http_api": {"key": "$KEY"},
 "debug": {"enabled": true}, "usage_stats": {"disabled": true}, "log": {"level": "error"}}
JSON

# cpu_ticks PID: the process's user+system CPU in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# summary FILE [EXTRA_CPU_SECONDS]: one line of the report's figures (the
# delivered share is messages ÷ (submissions × subscribers), with D in
# seconds); the extra CPU (Redis's) is added per message where given.
summary() {
	jq -r --arg extra "${2:-0}" --arg d "${D%s}" '
	  (.messages_per_second * .elapsed_seconds) as $msgs |
	  "\(.peer): \(.connected)/\(.subscribers) subscribed; \(.submits_per_second*100|floor/100) subm./s; \(.messages_per_second|floor) msgs/s of \(.bytes_per_second/.messages_per_second|floor) B, \($msgs/(.submits_per_second*($d|tonumber)*.subscribers)*1000|floor/10) % of updates × subscribers; p50 \(.latency_all.P50/1e6) ms p99 \(.latency_all.P99/1e6) ms; " +
	  "server \(.server_cores*100|floor/100) cores, \(.cpu_per_message_micros*100|floor/100) µs/msg" +
	  (if ($extra|tonumber) > 0 then "; redis \($extra) s CPU, \((($extra|tonumber)*1e6/$msgs)*100|floor/100) µs/msg more" else "" end) +
	  "; tool \(.tool_cores*100|floor/100) cores; gaps \(.gaps), reconnects \(.reconnects), dial errors \(.dial_errors), errors \(.errors), closes \(.closes)"' "$1"
}

watch_rankwire() {
	local n=$1 name=$2 prof=""
	start_gw --push-interval 100ms --heartbeat-interval 25s --pprof "127.0.0.1:$PPORT" --metrics-addr "127.0.0.1:$MPORT"
	if [ "${PROFILE:-0}" = 1 ]; then
		(sleep "${PROFILE_AT:-10}" && curl -s -o "$OUT/$name.pprof" "http://127.0.0.1:$PPORT/debug/pprof/profile?seconds=10") &
		prof=$!
	fi
	probe_start "$OUT/$name-probe.json"
	"$work/rwload" fanout -url "$URL" -metrics "http://127.0.0.1:$MPORT" -keys "$work/keys.json" -pid "$GW" -pprof "127.0.0.1:$PPORT" -q -json \
		-board watch -subs "$n" -top 1 -members 10 -rate 10 -batch 1 -writers 2 -d "$D" >"$OUT/$name.json" || true
	probe_stop
	if [ -n "$prof" ]; then wait "$prof" || true; fi
	stop_gw
	summary "$OUT/$name.json"
	probe_line "$OUT/$name-probe.json"
}

watch_centrifugo() {
	local n=$1 name=$2
	mkdir -p "$work/redis"
	redis-server --bind 127.0.0.1 --port "$RPORT" --save '' --appendonly no --protected-mode no \
		--dir "$work/redis" --daemonize no --loglevel warning &
	RS=$!
	"$CF" --config "$work/centrifugo.json" 2>"$work/cf.log" &
	CS=$!
	for _ in $(seq 300); do curl -fs "http://127.0.0.1:$CPORT/health" >/dev/null 2>&1 && break; sleep 0.1; done
	for _ in $(seq 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
	local r0
	r0=$(cpu_ticks "$RS")
	probe_start "$OUT/$name-probe.json"
	"$work/rwload" fanout -url "$URL" -keys "$work/keys.json" -metrics "" -redis "127.0.0.1:$RPORT" -centrifugo "127.0.0.1:$CPORT" \
		-centrifugo-key "$KEY" -pid "$CS" -q -json -board watch -subs "$n" -members 10 -rate 10 -batch 1 -writers 2 \
		-d "$D" >"$OUT/$name.json" || true
	probe_stop
	local rcpu
	rcpu=$(awk -v a="$r0" -v b="$(cpu_ticks "$RS")" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", (b-a)/hz}')
	kill "$CS" "$RS"
	wait "$CS" "$RS" || true
	CS="" RS=""
	summary "$OUT/$name.json" "$rcpu"
	probe_line "$OUT/$name-probe.json"
}

GATEWAYS=${GATEWAYS:-rankwire=}
SIDES=${SIDES:-floor rankwire centrifugo}
side() { [[ " $SIDES " == *" $1 "* ]]; }
for n in $SIZES; do
	for i in $(seq "$RUNS"); do
		if side floor; then
			echo "== floor: $n connections, 600 bytes each per 100 ms, loop $i"
			"$work/rwload" floor -conns "$n" -size 600 -interval 100ms -d "$D" | tee "$OUT/floor-$n-run$i.txt"
		fi
		if side rankwire; then
			for g in $GATEWAYS; do
				echo "== rankwire (${g%%=*}): $n × one top-10 view, 10 submissions/s, loop $i; load $(cut -d' ' -f1-3 /proc/loadavg)"
				GWBIN=${g#*=} watch_rankwire "$n" "${g%%=*}-$n-run$i"
			done
		fi
		if side centrifugo; then
			echo "== Redis + app + Centrifugo: $n × the top-10 channel, 10 submissions/s, loop $i"
			watch_centrifugo "$n" "centrifugo-$n-run$i"
		fi
	done
done
