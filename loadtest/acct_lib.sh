# acct_lib.sh is sourced by cluster_bench.sh: where a run's time and CPU
# go, from /proc and perf, for docs/BENCHMARKS.md "Where --sync always
# loses against lazy". It needs $work (bench_lib.sh).
#
#	perf_start / perf_stop   trace the gateway's ($GW) fsync and fdatasync
#	                         calls: how many, and the wall time inside them;
#	                         its context switches and futex calls
#	acct_start [PID]         snapshot the box's CPU (/proc/stat), PID's
#	                         user and system CPU and every kernel thread's
#	acct_stop LABEL          the second snapshot
#	acct_line                one "== account" line: seconds, the box's idle,
#	                         iowait, irq+softirq and steal (cores), the
#	                         gateway's user and system cores, the kernel
#	                         threads' (kworker, ksoftirqd, jbd2, other), the
#	                         load tool's ($work/loadcpu, bash `times`), the
#	                         fsyncs and their time, and the run's metrics
#	                         ($work/metrics): submissions, events, publish
#	                         round trip; items per fsync
#
# CPU is in cores (CPU seconds per second) at the kernel's 100 Hz ticks.

# acct_snap FILE [PID] writes one snapshot.
acct_snap() {
	{
		echo "T $(date +%s.%N)"
		grep '^cpu ' /proc/stat | sed 's/^cpu /C /'
		[ -z "${2:-}" ] || sed 's/.*) //' "/proc/$2/stat" | awk '{print "G", $12, $13}'
		# kernel threads: children of kthreadd (pid 2); their CPU by pid
		awk '$4 == 2 || $1 == 2 {print "K", $1, $2, $14, $15; nextfile} {nextfile}' /proc/[0-9]*/stat 2>/dev/null || true # a process gone between the glob and the read
	} >"$1"
}

ACCT_LABEL=""
acct_start() {
	rm -f "$work/acct.0" "$work/acct.1" "$work/loadcpu" "$work/metrics" "$work/fsyncs"
	acct_snap "$work/acct.0" "${1:-}"
}
acct_stop() {
	acct_snap "$work/acct.1" "${GW:-}"
	ACCT_LABEL=$1
}

acct_line() {
	local fs="" lc="" m=""
	[ -f "$work/fsyncs" ] && fs=$(cat "$work/fsyncs")
	[ -f "$work/loadcpu" ] && lc=$(cat "$work/loadcpu")
	[ -f "$work/metrics" ] && m=$(awk '{n = $1; sub(/\{.*/, "", n); v[n] += $NF} END {for (n in v) printf "%s=%s ", n, v[n]}' "$work/metrics")
	awk -v label="$ACCT_LABEL" -v fs="$fs" -v lc="$lc" -v m="$m" '
	function cls(name) {
		if (name ~ /^\(ksoftirqd/) return "ksoftirqd"
		if (name ~ /^\(kworker/) return "kworker"
		if (name ~ /^\(jbd2/) return "jbd2"
		return "kother"
	}
	function secs(s,  a, b) { # bash times: 0m1.234s
		split(s, a, "m"); sub("s", "", a[2]); return a[1] * 60 + a[2]
	}
	FNR == 1 { f++ }
	$1 == "T" { t[f] = $2 }
	$1 == "C" { for (i = 2; i <= NF; i++) c[f, i] = $i }
	$1 == "G" { gu[f] = $2; gs[f] = $3 }
	$1 == "K" { k[f, $2] = $4 + $5; kn[$2] = $3 }
	END {
		dt = t[2] - t[1]; hz = 100
		tot = 0; for (i = 2; i <= 9; i++) tot += c[2, i] - c[1, i]
		cores = tot / hz / dt
		idle = (c[2, 5] - c[1, 5]) / hz / dt; iow = (c[2, 6] - c[1, 6]) / hz / dt
		irq = (c[2, 7] + c[2, 8] - c[1, 7] - c[1, 8]) / hz / dt; steal = (c[2, 9] - c[1, 9]) / hz / dt
		for (key in k) {
			split(key, p, SUBSEP)
			if (p[1] != 2) continue
			d = k[2, p[2]] - k[1, p[2]] # a thread born during the run: from 0
			kc[cls(kn[p[2]])] += d
		}
		printf "== account %s: %.2f s, box %.2f cores: idle %.2f iowait %.2f irq+softirq %.2f steal %.2f", label, dt, cores, idle, iow, irq, steal
		if (2 in gu) printf "; gateway user %.2f sys %.2f", (gu[2] - gu[1]) / hz / dt, (gs[2] - gs[1]) / hz / dt
		printf "; kernel threads kworker %.3f ksoftirqd %.3f jbd2 %.3f other %.3f", kc["kworker"] / hz / dt, kc["ksoftirqd"] / hz / dt, kc["jbd2"] / hz / dt, kc["kother"] / hz / dt
		if (lc != "") { split(lc, l, " "); printf "; load tool user %.2f sys %.2f", secs(l[1]) / dt, secs(l[2]) / dt }
		if (fs != "") printf "; %s", fs
		if (m != "") {
			n = split(m, kv, " ")
			for (i = 1; i <= n; i++) { split(kv[i], x, "="); mv[x[1]] = x[2] }
			sub_ = mv["rankwire_submissions_total"]; ev = mv["rankwire_applied_sequence"]
			pc = mv["rankwire_publish_duration_seconds_count"]; ps = mv["rankwire_publish_duration_seconds_sum"]
			printf "; submissions %d events %d publish %.2f ms", sub_, ev, (pc > 0 ? ps / pc * 1e3 : 0)
			split(fs, fw, " "); if (fw[2] + 0 > 0) printf " items/fsync %.1f", sub_ / fw[2]
		}
		printf "\n"
	}' "$work/acct.0" "$work/acct.1"
}

# perf_start traces the gateway's fsync calls until perf_stop, where perf
# may trace syscalls; else both do nothing. perf_stop writes "fsyncs N,
# in fsync X ms, mean Y µs, max Z µs" to $work/fsyncs.
PERF=""
PERFSTAT=""
perf_start() {
	PERF=""
	command -v perf >/dev/null || return 0
	perf record -q -o "$work/perf.data" -p "$GW" -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync \
		-e syscalls:sys_enter_fdatasync -e syscalls:sys_exit_fdatasync 2>/dev/null &
	PERF=$!
	perf stat -x, -o "$work/perfstat" -p "$GW" -e context-switches -e syscalls:sys_enter_futex 2>/dev/null &
	PERFSTAT=$!
	sleep 0.5 # attached before the load starts
}
perf_stop() {
	[ -n "$PERF" ] || return 0
	kill -INT "$PERF" "$PERFSTAT" 2>/dev/null || true
	wait "$PERF" "$PERFSTAT" 2>/dev/null || true
	PERF=""
	PERFSTAT=""
	perf script -i "$work/perf.data" -F tid,time,event 2>/dev/null | awk '
		{ sub(":", "", $2) }
		$3 ~ /enter/ { s[$1] = $2; next }
		($1 in s) { d = ($2 - s[$1]) * 1e6; n++; sum += d; if (d > mx) mx = d; delete s[$1] }
		END { printf "fsyncs %d in fsync %.1f ms mean %.0f us max %.0f us", n, sum / 1e3, (n ? sum / n : 0), mx }' >"$work/fsyncs"
	awk -F, '$3 == "context-switches" {cs = $1} $3 ~ /futex/ {fx = $1} END {printf " cswitches %d futex %d\n", cs, fx}' "$work/perfstat" >>"$work/fsyncs" 2>/dev/null || true
	rm -f "$work/perf.data"
}
