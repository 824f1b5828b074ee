# acct_table.awk turns the output of `loadtest/cluster_bench.sh sync` (its
# "== account" lines, acct_lib.sh) into one row per run and, per setting,
# the medians, and each round's always/lazy ratio:
#
#	awk -f loadtest/acct_table.awk OUTPUT...
#
# Columns: submissions/s; events/s (one fsync each under always: the
# store fsyncs every message); fsyncs/s as perf counted them (from its
# attach, a little after the load's start); items per event; mean wall time
# of one fsync in the gateway (perf) and the storing goroutine's share of
# time in fsync (that mean times events/s); publish round trip; gateway user and
# system cores and µs of gateway CPU per submission; kworker cores; the
# box's idle cores; the gateway's context switches per event.
function med(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function num(s, re,   m) { return match($0, re) ? substr($0, RSTART, RLENGTH) : "" }
function after(key,   i) { for (i = 1; i < NF; i++) if ($i == key) return $(i + 1) + 0; return 0 }
/submissions\/s/ { rate = $2 }
/^fsync floor:/ { floor[++nf] = $0 }
/^== account mode=/ {
	split($3, m, "="); split($4, b, "="); split($5, r, "=")
	mode = m[2]; bt = b[2]; run = r[2]
	secs = $6 + 0
	gsub(/;/, "")
	ev = after("events"); fs = after("fsyncs"); inf = after("fsync"); pub = after("publish")
	gu = after("user"); gs = after("sys"); kw = after("kworker"); idle = after("idle")
	sub_ = after("submissions"); cs = after("cswitches"); fx = after("futex")
	k = mode " " bt
	n[k]++
	R[k, n[k]] = rate; E[k, n[k]] = ev / secs; F[k, n[k]] = fs / secs; I[k, n[k]] = (ev ? sub_ / ev : 0)
	W[k, n[k]] = (fs ? inf / fs * 1e3 : 0); S[k, n[k]] = W[k, n[k]] / 1e6 * E[k, n[k]]; P[k, n[k]] = pub
	GU[k, n[k]] = gu; GS[k, n[k]] = gs; C[k, n[k]] = (sub_ ? (gu + gs) * secs / sub_ * 1e6 : 0); K[k, n[k]] = kw; ID[k, n[k]] = idle
	X[k, n[k]] = (ev ? cs / ev : 0) # perf counts from 0.5 s before the load, the gateway idle then
	rr[mode, bt, run] = rate
	printf "%-6s b=%-3s run %-2s %8.0f/s  events %6.0f/s  fsyncs %6.0f/s  items/event %6.1f  fsync %6.0f us  in fsync %4.0f%%  publish %6.2f ms  gw user %.2f sys %.2f  gw CPU/sub %5.1f us  kworker %.3f  idle %.2f  cswitch/event %.1f\n", mode, bt, run, rate, E[k, n[k]], F[k, n[k]], I[k, n[k]], W[k, n[k]], 100 * S[k, n[k]], pub, gu, gs, C[k, n[k]], kw, idle, X[k, n[k]]
}
END {
	print ""
	for (k in n) {
		c = n[k]
		for (i = 1; i <= c; i++) { a1[i] = R[k, i]; a2[i] = E[k, i]; a3[i] = F[k, i]; a4[i] = I[k, i]; a5[i] = W[k, i]; a6[i] = S[k, i]; a7[i] = P[k, i]; a8[i] = GU[k, i]; a9[i] = GS[k, i]; a10[i] = C[k, i]; a11[i] = K[k, i]; a12[i] = ID[k, i]; a13[i] = X[k, i] }
		printf "median %-9s (%d runs) %8.0f/s  events %6.0f/s  fsyncs %6.0f/s  items/event %6.1f  fsync %6.0f us  in fsync %4.0f%%  publish %6.2f ms  gw user %.2f sys %.2f  gw CPU/sub %5.1f us  kworker %.3f  idle %.2f  cswitch/event %.1f\n", k, c, med(a1, c), med(a2, c), med(a3, c), med(a4, c), med(a5, c), 100 * med(a6, c), med(a7, c), med(a8, c), med(a9, c), med(a10, c), med(a11, c), med(a12, c), med(a13, c)
	}
	for (bt = 1; bt <= 100; bt += 99) {
		c = 0
		for (key in rr) { split(key, p, SUBSEP); if (p[1] == "always" && p[2] == bt && ((p[1] = "lazy") SUBSEP bt SUBSEP p[3]) in rr) ratio[++c] = rr["always", bt, p[3]] / rr["lazy", bt, p[3]] }
		if (!c) continue
		for (i = 1; i <= c; i++) q[i] = ratio[i]
		med(q, c)
		printf "always/lazy, batch %d: min %.2f median %.2f max %.2f (%d rounds)\n", bt, q[1], med(ratio, c), q[c], c
	}
	for (i = 1; i <= nf; i++) print floor[i]
}
