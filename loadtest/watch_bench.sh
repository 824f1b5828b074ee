#!/usr/bin/env bash
# watch_bench.sh runs docs/BENCHMARKS.md "Watching shapes beside
# Centrifugo" (issue 24): N subscribers on one top-10 view of a 10-member
# board, 10 submissions/s (every one changes the view), against a fresh
# gateway and against a fresh "Redis + app + Centrifugo" (rwload fanout
# -redis -centrifugo: the writer ZADDs, reads the top 10 back and
# publishes it whole through Centrifugo's server API; the subscribers are
# Centrifugo JSON-protocol clients), with the bare-write floor (rwload
# floor, N connections, 600 B each per 100 ms) in the same loop; the three
# interleaved, RUNS loops per size. SHAPE=around runs the around-me shape
# instead: N players (default 2,000) each watching its own neighbourhood
# (radius 5) of a 100,000-member board, 1,000 submissions/s in batches of
# 10 spread over the members (4 writers on both sides); the app ZADDs,
# finds the watchers near each submission (ZREVRANK, a ZREVRANGE window)
# and publishes their neighbourhoods to per-player channels in one
# /api/batch (fanout_around.go). No floor there by default (FLOOR=1 for
# one): a delivered message is a few hundred a second, and what it costs
# is the submissions' processing, not the write. The gateway's heartbeats are set to
# Centrifugo's ping interval (25 s), so that neither server's keepalives
# weigh on the figures (rwload counts the gateway's heartbeats as messages
# and not Centrifugo's pings). Two writers on both sides, so that a
# publish Centrifugo answers late does not make the pacer drop the next.
# Beside each server's run, `rwload probe` measures the machine's latency
# floor (how late a 10 ms sleep wakes; a 100-byte loopback ping-pong; a
# 512-byte append and fsync beside the gateway's data), printed after the
# run's line; rankwire's line also has the gateway's own parts of a
# submission's way (its HTTP request, the publish with its fsync, the
# feed's drain: fanout_parts.go), as histogram bucket bounds. After the
# peer's run of a loop, one line per rankwire run of it gives issue 24's
# framing of CPU per delivered message: the gateway process against app +
# Redis + Centrifugo (framing(), below). Everything listens on 127.0.0.1; every
# process it starts is stopped by its PID.
#
#	CENTRIFUGO=/path/to/centrifugo loadtest/watch_bench.sh
#
# Without CENTRIFUGO it builds Centrifugo from source at the pinned version
# (go install github.com/centrifugal/centrifugo/v6@v6.9.1: several minutes).
# Environment: RUNS (default 2), D (default 20s), SIZES (default
# "5000 10000"), OUT (JSON reports; default a directory under /tmp that is
# removed at the end unless given), PROFILE (1: a CPU profile of the
# gateway PROFILE_AT (default 10) s into each of its runs (counted from the
# gateway's start: the preload and the connections come first), or, where
# PROFILE_IN is set, PROFILE_IN s into rwload's measured phase (its first
# progress line: they go to $OUT/NAME.log),
# PROFILE_SECONDS long (default 10), into $OUT/NAME.pprof; from the same
# moment a TRACE_SECONDS (default 5) execution trace of the gateway,
# $OUT/NAME.trace (read it with go tool trace -pprof=sched|net|syscall);
# and the load tool's CPU profile over its life, $OUT/NAME-rwload-PID.pprof
# (RWLOAD_CPUPROFILE: the coordinator, with INPROC=1 the subscribers too,
# and the burst floor's writers)), BURST_AT (rankwire's runs, top shape:
# this far into the measured phase, the burst floor of docs/BENCHMARKS.md
# "Reach: the top view's burst against its floor" in the same run: a bare
# writer process writes one BURST_SIZE-byte frame (default 160, about a
# top-10 diff) with plain write(2)s to as many loopback sockets as watch
# the view, read by the same subscriber process with a bare read(2); its
# latency from the burst's start beside the view's; default 0: none),
# BURST_EVERY (repeat it this often while the measured phase lasts;
# default 0: once; with RATE=0, the top shape's submissions per second,
# default 10, the floor's bursts alone beside the idle watchers),
# PORT (gateway, 18110),
# CPORT (Centrifugo, 18200), RPORT (Redis, 16391), SHAPE (top, the
# default, around, lobby, rank or members; BOARD_MEMBERS sizes the last
# two's board), FLOOR (1: run the floor; the default for top),
# REDIS_FSYNC (always: the peer's Redis with an append-only file fsynced
# before each answer, a durable log as --sync always; default none),
# SYNCS (the gateway's --sync settings, one rankwire run each per loop;
# default "always", the gateway's default), HEARTBEAT (the gateway's
# heartbeat and Centrifugo's ping interval: 25 s, Centrifugo's default,
# for top; 60 s, the gateway's most, for around, where 2,000 heartbeats
# each 25 s would be a third of the messages counted: longer than a run's
# measured phase, so that neither side sends one in it), INPROC (1: the
# subscribers in rwload's own process, with the writers, so that the
# report also has the latency from each batch's acknowledgement,
# latency_after_ack: rankwire's HTTP answer, the peer app's once Redis
# took the write, before its publish; each loop then ends in the
# from-ack and from-send ratios, ack_ratio), GATEWAYS (prebuilt gateways to run in turn in each
# loop, "NAME=PATH ...", e.g. "main=/tmp/gw-main after=/tmp/gw-after" for
# a before/after in one sitting; default "rankwire=", the gateway built
# from SRC), SIDES (which sides run, default "floor rankwire centrifugo";
# the floor only where FLOOR=1; "centrifugo-delta" adds a run of the
# Centrifugo side with its delta option: channels allowing fossil deltas,
# with the history and positioning Centrifugo OSS needs for them, the
# subscribers asking for them and the app publishing with "delta": true,
# rwload fanout -centrifugo-delta).
#
# SHAPE=lobby is the lobby of docs/BENCHMARKS.md (issue 24): N
# subscriptions (default 10,000) of the top shape's view, PER_CONN
# (default 4) to a connection (2,500 connections): on rankwire 4
# subscriptions of the same top-10 view on one WebSocket; on Centrifugo 4
# channels on one WebSocket (a connection subscribes to a channel once),
# to which the app broadcasts each changed top 10 in one POST
# /api/broadcast. 10 submissions/s as the top shape, so 100,000 messages
# a second offered on both sides. The floor there is N ÷ PER_CONN
# connections, 600 B each per 100 ms: a write per connection per state,
# as a server that packs a connection's 4 messages into one write pays.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-2}
D=${D:-20s}
SHAPE=${SHAPE:-top}
SYNCS=${SYNCS:-always}
INPROC_FLAG=()
if [ "${INPROC:-0}" = 1 ]; then INPROC_FLAG=(-in-process); fi
BURST_FLAG=()
if [ "${BURST_AT:-0}" != 0 ]; then
	BURST_FLAG=(-burst-floor-at "$BURST_AT" -burst-floor-every "${BURST_EVERY:-0}" -burst-floor-size "${BURST_SIZE:-160}")
fi
case $SHAPE in
top)
	PER_CONN=1
	SIZES=${SIZES:-5000 10000}
	FLOOR=${FLOOR:-1}
	HEARTBEAT=${HEARTBEAT:-25s}
	RW_VIEW=(-board watch -top 1 -members 10 -rate "${RATE:-10}" -batch 1 -writers 2)
	CF_VIEW=(-board watch -members 10 -rate "${RATE:-10}" -batch 1 -writers 2)
	;;
lobby)
	PER_CONN=${PER_CONN:-4}
	SIZES=${SIZES:-10000}
	FLOOR=${FLOOR:-1}
	HEARTBEAT=${HEARTBEAT:-25s}
	RW_VIEW=(-board watch -top 1 -members 10 -rate 10 -batch 1 -writers 2 -per-conn "$PER_CONN")
	CF_VIEW=(-board watch -members 10 -rate 10 -batch 1 -writers 2 -per-conn "$PER_CONN")
	;;
rank | members)
	# N subscribers each on a rank line (ranks 1…1,000) or on 10 members'
	# rows of a BOARD_MEMBERS-member board (default 100,000), at around's
	# load; for the bytes a delivered update costs of each view kind. The
	# Centrifugo side's app publishes each changed rank line or members
	# view whole to its own channel (fanout_views.go). On 100,000 members
	# a view changes about once in 100 s (rank) or 10 s (members); a
	# smaller board (BOARD_MEMBERS=1000) changes each about once a second,
	# so that the delta option's steady state shows within a run.
	PER_CONN=1
	SIZES=${SIZES:-2000}
	FLOOR=${FLOOR:-0}
	HEARTBEAT=${HEARTBEAT:-60s}
	kind=(-rank 1)
	[ "$SHAPE" = members ] && kind=(-members-views 1)
	RW_VIEW=(-board "$SHAPE" "${kind[@]}" -members "${BOARD_MEMBERS:-100000}" -rate 1000 -batch 10 -writers 4)
	CF_VIEW=("${RW_VIEW[@]}")
	;;
around)
	PER_CONN=1
	SIZES=${SIZES:-2000}
	FLOOR=${FLOOR:-0}
	HEARTBEAT=${HEARTBEAT:-60s}
	RW_VIEW=(-board around -around 1 -radius 5 -members 100000 -rate 1000 -batch 10 -writers 4)
	CF_VIEW=("${RW_VIEW[@]}")
	;;
*)
	echo "SHAPE=$SHAPE: want top, lobby, around, rank or members" >&2
	exit 2
	;;
esac
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
# the key; pprof (debug) on the same port; error-level logs; pings at the
# gateway's heartbeat interval.
cat >"$work/centrifugo.json" <<JSON
{"http_server": {"address": "127.0.0.1", "port": $CPORT},
 "client": {"insecure": true, "allowed_origins": ["*"], "ping_interval": "$HEARTBEAT"},
 "http_api": {"key": "$KEY"},
 "debug": {"enabled": true}, "health": {"enabled": true}, "usage_stats": {"disabled": true}, "log": {"level": "error"}}
JSON
# The same with the delta option (the "centrifugo-delta" side): channels
# without a namespace allow fossil deltas, which Centrifugo OSS computes
# against the previous publication in the channel's history, so history
# (10 publications, 300 s) and positioning are on there.
cat >"$work/centrifugo-delta.json" <<JSON
{"http_server": {"address": "127.0.0.1", "port": $CPORT},
 "client": {"insecure": true, "allowed_origins": ["*"], "ping_interval": "$HEARTBEAT"},
 "channel": {"without_namespace": {"allowed_delta_types": ["fossil"], "history_size": 10, "history_ttl": "300s", "force_positioning": true}},
 "http_api": {"key": "$KEY"},
 "debug": {"enabled": true}, "health": {"enabled": true}, "usage_stats": {"disabled": true}, "log": {"level": "error"}}
JSON

# summary FILE: one line of the report's figures (the delivered share is
# messages ÷ (submissions × subscribers), with D in seconds: the top
# shape's; messages per submission for around). For the Centrifugo side
# the server is Centrifugo and Redis (-nodes), each given apart; "with
# the writers" adds the writers' process (the app, on that side; the
# submitting client on rankwire's) to the server's CPU per message.
summary() {
	jq -r --arg d "${D%s}" '
	  (.messages_per_second * .elapsed_seconds) as $msgs |
	  def permsg(c): (c * .elapsed_seconds * 1e6 / $msgs * 100 | floor / 100);
	  def side: (if .peer == "rankwire" then .server_cores else .server_cores + .writer_cores end);
	  "\(.peer): \(.connected)/\(.subscribers) subscribed; \(.submits_per_second*100|floor/100) subm./s (late batches \(.late_batches), answer p50 \(.write_latency.P50/1e6) ms); \(.messages_per_second|floor) msgs/s of \(.bytes_per_second/.messages_per_second|floor) B (\((.wire_bytes_per_second // 0)/.messages_per_second|floor) B in WebSocket frames" +
	  (if (.deltas_per_second // 0) > 0 then "; \(.deltas_per_second/.messages_per_second*1000|floor/10) % of them fossil deltas of \(.delta_bytes_per_second/.deltas_per_second|floor) B, the rest whole of \((.bytes_per_second - .delta_bytes_per_second)/([.messages_per_second - .deltas_per_second, 1e-9]|max)|floor) B" else "" end) +
	  (if (.heartbeats_per_second // 0) > 0 then "; \(.heartbeats_per_second*10|floor/10) of them heartbeats/s, the \(.messages_per_second - .heartbeats_per_second|floor) updates/s of \((.bytes_per_second - .heartbeat_bytes_per_second)/([.messages_per_second - .heartbeats_per_second, 1e-9]|max)|floor) B (\(((.wire_bytes_per_second // 0) - .heartbeat_wire_per_second)/([.messages_per_second - .heartbeats_per_second, 1e-9]|max)|floor) B in frames)" else "" end) + "), " +
	  (if (.mix|test("^(around|rank|members)")) then "\(.messages_per_second/.submits_per_second*1000|floor/1000) msgs per submission" else "\($msgs/(.submits_per_second*($d|tonumber)*.subscribers)*1000|floor/10) % of updates × subscribers" end) +
	  "; from the send p50 \(.latency_all.P50/1e6) ms p90 \(.latency_all.P90/1e6) ms p99 \(.latency_all.P99/1e6) ms; " +
	  (if .latency_after_ack then "after the ack p50 \(.latency_after_ack.P50/1e6) ms p90 \(.latency_after_ack.P90/1e6) ms p99 \(.latency_after_ack.P99/1e6) ms; " else "" end) +
	  (if .burst_floor then "burst floor \(.burst_floor.sockets) sockets, \(.burst_floor.bursts) bursts, written in at most \(.burst_floor.write_seconds*1000|floor) ms: p50 \(.burst_floor.latency.P50/1e6) ms p90 \(.burst_floor.latency.P90/1e6) ms p99 \(.burst_floor.latency.P99/1e6) ms (n \(.burst_floor.latency.Count)); " else "" end) +
	  "answer p99 \(.write_latency.P99/1e6) ms; " +
	  (if (.parts // {}) != {} then "parts p50/p99 (bucket bounds, ms): " + ([.parts | to_entries[] | "\(.key) \(.value.p50_seconds*1000)/\(.value.p99_seconds*1000) (n \(.value.count))"] | join(", ")) + "; " else "" end) +
	  "server \(.server_cores*100|floor/100) cores, \(.cpu_per_message_micros*100|floor/100) µs/msg" +
	  (if .messages_per_write then " (\(.messages_per_write*100|floor/100) messages per write)" else "" end) +
	  (if (.nodes|length) == 2 then " (centrifugo \(.nodes[0].cores*100|floor/100) cores, \(permsg(.nodes[0].cores)) µs/msg; redis \(.nodes[1].cores*100|floor/100) cores, \(permsg(.nodes[1].cores)) µs/msg)" else "" end) +
	  "; writers \(.writer_cores*100|floor/100) cores, \(permsg(.writer_cores)) µs/msg; with the writers \(permsg(.server_cores + .writer_cores)) µs/msg" +
	  "; server side (issue 24: \(if .peer == "rankwire" then "the gateway" else "app + Redis + Centrifugo" end)) \(permsg(side)) µs/msg" +
	  "; tool \(.tool_cores*100|floor/100) cores; gaps \(.gaps), reconnects \(.reconnects), dial errors \(.dial_errors), errors \(.errors), closes \(.closes)"' "$1"
}

# ack_ratio RANKWIRE.json... CF.json: issue 24's "within 1.5×" with
# INPROC=1, each rankwire run of a loop against the peer's in the same
# loop: the ratio of their latencies from the acknowledgement (rankwire's
# HTTP answer; the app's once Redis took the write, before its publish)
# and from the send.
ack_ratio() {
	local cf=${*: -1} f
	for f in "${@:1:$#-1}"; do
		jq -rs --arg name "$(basename "$f" .json)" '
		  def r(k): (if .[1][k] > 0 then "\(.[0][k] / .[1][k] * 100 | floor / 100)×" else "-" end);
		  def ms(l; k): "\(.[l][k] / 1e6)";
		  (map({ap50: (.latency_after_ack.P50 // 0), ap99: (.latency_after_ack.P99 // 0), sp50: .latency_all.P50, sp99: .latency_all.P99})) |
		  "issue 24 latency, \($name) ÷ the peer: from the ack p50 \(ms(0; "ap50")) ÷ \(ms(1; "ap50")) ms = \(r("ap50")), p99 \(ms(0; "ap99")) ÷ \(ms(1; "ap99")) ms = \(r("ap99")); from the send p50 \(ms(0; "sp50")) ÷ \(ms(1; "sp50")) ms = \(r("sp50")), p99 \(ms(0; "sp99")) ÷ \(ms(1; "sp99")) ms = \(r("sp99"))"' "$f" "$cf" || true
	done
}

# framing RANKWIRE.json... CF.json: issue 24's framing of CPU per
# delivered message, each rankwire run of a loop against the peer's in the
# same loop: the server side's CPU over the measured phase ÷ the messages
# delivered, load clients (subscribers, submitting writers) excluded on
# both sides. rankwire's server side is the gateway process; the peer's is
# the app + Redis + Centrifugo, the app being the writers' process (its
# own pacing of the submissions, a few lines of it, counts with the app:
# the peer has no submitting client apart from it).
framing() {
	local cf=${*: -1} f
	if [ "${INPROC:-0}" = 1 ]; then # the subscribers then share the app's process
		echo "issue 24 framing: not with INPROC=1 (the subscribers count with the writers' process)"
		ack_ratio "$@"
		return 0
	fi
	for f in "${@:1:$#-1}"; do
		jq -rs --arg name "$(basename "$f" .json)" '
		  def permsg: (.server_cores + (if .peer == "rankwire" then 0 else .writer_cores end)) * 1e6 / .messages_per_second;
		  "issue 24 framing, \($name): gateway \(.[0]|permsg*100|floor/100) µs/msg ÷ app + Redis + Centrifugo \(.[1]|permsg*100|floor/100) µs/msg = \((.[0]|permsg)/(.[1]|permsg)*1000|floor/1000)×; per submission \((.[0].server_cores/.[0].submits_per_second)/((.[1].server_cores+.[1].writer_cores)/.[1].submits_per_second)*1000|floor/1000)×"' "$f" "$cf" || true
	done
}

# profile_gw NAME: the gateway's CPU profile and execution trace (see
# PROFILE), PROFILE_AT seconds from now, at once. Runs in the background.
profile_gw() {
	if [ -n "${PROFILE_IN:-}" ]; then
		for _ in $(seq 1200); do
			grep -Eq '^ +[0-9]+s subs' "$OUT/$1.log" 2>/dev/null && break
			sleep 0.2
		done
		sleep "$PROFILE_IN"
	else
		sleep "${PROFILE_AT:-10}"
	fi
	date -u +"== %H:%M:%S.%3N profile (${PROFILE_SECONDS:-10} s) and trace (${TRACE_SECONDS:-5} s) of $1 begin" >&2
	curl -s -o "$OUT/$1.pprof" "http://127.0.0.1:$PPORT/debug/pprof/profile?seconds=${PROFILE_SECONDS:-10}" &
	curl -s -o "$OUT/$1.trace" "http://127.0.0.1:$PPORT/debug/pprof/trace?seconds=${TRACE_SECONDS:-5}" &
	wait
}

watch_rankwire() {
	local n=$1 name=$2 sync=$3 prof="" rwprof=""
	start_gw --push-interval 100ms --heartbeat-interval "$HEARTBEAT" --sync "$sync" --pprof "127.0.0.1:$PPORT" --metrics-addr "127.0.0.1:$MPORT"
	if [ "${PROFILE:-0}" = 1 ]; then
		profile_gw "$name" &
		prof=$!
		rwprof="$OUT/$name-rwload"
	fi
	probe_start "$OUT/$name-probe.json"
	# The progress lines go to $OUT/NAME.log: PROFILE_IN waits for the
	# first of the measured phase.
	RWLOAD_CPUPROFILE="$rwprof" "$work/rwload" fanout -url "$URL" -metrics "http://127.0.0.1:$MPORT" -keys "$work/keys.json" -pid "$GW" -pprof "127.0.0.1:$PPORT" -json \
		-subs "$n" "${RW_VIEW[@]}" ${INPROC_FLAG[@]+"${INPROC_FLAG[@]}"} ${BURST_FLAG[@]+"${BURST_FLAG[@]}"} -d "$D" >"$OUT/$name.json" 2>"$OUT/$name.log" || true
	probe_stop
	if [ -n "$prof" ]; then wait "$prof" || true; fi
	stop_gw
	if [ "${RATE:-10}" = 0 ]; then # no submissions: the floor's line alone
		jq -r '"idle watchers: \(.connected)/\(.subscribers) subscribed; burst floor \(.burst_floor.sockets) sockets, \(.burst_floor.bursts) bursts, written in at most \(.burst_floor.write_seconds*1000|floor) ms: p50 \(.burst_floor.latency.P50/1e6) ms p90 \(.burst_floor.latency.P90/1e6) ms p99 \(.burst_floor.latency.P99/1e6) ms max \(.burst_floor.latency.Max/1e6) ms (n \(.burst_floor.latency.Count))"' "$OUT/$name.json" || true
	else
		summary "$OUT/$name.json"
	fi
	probe_line "$OUT/$name-probe.json"
}

watch_centrifugo() {
	local n=$1 name=$2 delta=${3:-} conf=$work/centrifugo.json
	local flags=()
	if [ -n "$delta" ]; then
		conf=$work/centrifugo-delta.json
		flags=(-centrifugo-delta)
	fi
	rm -rf "$work/redis" # a fresh Redis each run, its log (REDIS_FSYNC) too
	mkdir -p "$work/redis"
	# REDIS_FSYNC=always: Redis logs every write and fsyncs it before it
	# answers (AOF, appendfsync always), a durable log as the gateway's
	# --sync always; by default it keeps nothing.
	local aof=(--appendonly no)
	if [ "${REDIS_FSYNC:-}" = always ]; then aof=(--appendonly yes --appendfsync always); fi
	redis-server --bind 127.0.0.1 --port "$RPORT" --save '' "${aof[@]}" --protected-mode no \
		--dir "$work/redis" --daemonize no --loglevel warning >"$work/redis.log" &
	RS=$!
	"$CF" --config "$conf" 2>"$work/cf.log" &
	CS=$!
	for _ in $(seq 300); do curl -fs "http://127.0.0.1:$CPORT/health" >/dev/null 2>&1 && break; sleep 0.1; done
	for _ in $(seq 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
	# The server's figures are Centrifugo's and Redis's summed over the
	# measured phase, each node's beside them.
	probe_start "$OUT/$name-probe.json"
	"$work/rwload" fanout -url "$URL" -keys "$work/keys.json" -metrics "" -redis "127.0.0.1:$RPORT" -centrifugo "127.0.0.1:$CPORT" \
		-centrifugo-key "$KEY" -nodes "$CS,$RS" -q -json -subs "$n" "${CF_VIEW[@]}" ${flags[@]+"${flags[@]}"} ${INPROC_FLAG[@]+"${INPROC_FLAG[@]}"} -d "$D" >"$OUT/$name.json" || true
	probe_stop
	kill "$CS" "$RS"
	wait "$CS" "$RS" || true
	CS="" RS=""
	summary "$OUT/$name.json"
	probe_line "$OUT/$name-probe.json"
}

GATEWAYS=${GATEWAYS:-rankwire=}
SIDES=${SIDES:-floor rankwire centrifugo}
side() { [[ " $SIDES " == *" $1 "* ]] && { [[ $1 != centrifugo* ]] || [ ${#CF_VIEW[@]} -gt 0 ]; }; }
for n in $SIZES; do
	for i in $(seq "$RUNS"); do
		echo "== $(date -u +%H:%M:%S) load average $(cut -d' ' -f1-3 /proc/loadavg)"
		if [ "$FLOOR" = 1 ] && side floor; then
			echo "== floor: $((n / ${PER_CONN:-1})) connections, 600 bytes each per 100 ms, loop $i"
			"$work/rwload" floor -conns "$((n / ${PER_CONN:-1}))" -size 600 -interval 100ms -d "$D" | tee "$OUT/floor-$SHAPE-$n-run$i.txt"
		fi
		if side rankwire; then
			for g in $GATEWAYS; do
				for sync in $SYNCS; do
					echo "== rankwire (${g%%=*}, --sync $sync): $n, shape $SHAPE, loop $i"
					GWBIN=${g#*=} watch_rankwire "$n" "${g%%=*}-$SHAPE-$sync-$n-run$i" "$sync"
				done
			done
		fi
		if side centrifugo; then
			echo "== Redis + app + Centrifugo: $n, shape $SHAPE, loop $i"
			watch_centrifugo "$n" "centrifugo-$SHAPE-$n-run$i"
			# shellcheck disable=SC2046 # the loop's rankwire reports, one word each
			framing $(for g in $GATEWAYS; do for sync in $SYNCS; do f="$OUT/${g%%=*}-$SHAPE-$sync-$n-run$i.json"; [ -s "$f" ] && echo "$f"; done; done) "$OUT/centrifugo-$SHAPE-$n-run$i.json"
		fi
		if side centrifugo-delta; then
			echo "== Redis + app + Centrifugo, delta option: $n, shape $SHAPE, loop $i"
			watch_centrifugo "$n" "centrifugo-delta-$SHAPE-$n-run$i" delta
		fi
	done
done
