// Package readiness decides whether a gateway is ready: whether it can
// acknowledge its tenants' writes and serves reads within a bounded lag
// (docs/OPERATIONS.md, "Readiness"). It is a pure state machine fed
// observations by a prober (cmd/gateway): no clock, no goroutines, no I/O,
// every time comes in an argument. It imports nothing of the project.
//
// Hysteresis: a condition that the whole cluster feels at once (a tenant
// stream without a reachable leader, as during the election that follows
// a peer's death, or, on a node with no tenant open, the JetStream API) turns the node not ready only
// once it has held for Config.FailAfter, longer than an election takes, so
// that healthy nodes do not flap when a peer dies or returns. A condition
// only this node has (not serving, its store refusing writes, a replica
// behind by more than Config.MaxLag, a pause, hearing from fewer than a
// majority of the cluster's servers) turns it not ready at once. The time
// a tenant's stream spends without a reachable leader while this node
// hears a majority (an election) does not count against a pending
// catch-up's MaxLag, up to FailAfter per catch-up: the hold judges it, and
// a healthy replica, a probe behind when the leader died, would otherwise
// be stale after an election shorter than the hold.
//
// Cut off or electing: a node cannot tell the election that follows a
// peer's death from a partition by its streams (in both their leader does
// not answer), but it can by whom it hears (Reach, from internal/reach):
// during an election it still hears from a majority and keeps the hold; a
// node cut off hears from fewer and is not ready at once, its tenants not
// writable and stale, and after the cut its replicas' catch-up counts from
// the cut's start, so that it says ready only once it has caught up. A
// node that misses a peer another still hears (a non-transitive
// partition) and whose tenant's stream leader does not answer counts that
// at once too.
// A node that is not ready turns ready only after Config.RecoverAfter of
// observations without any failing condition; at start, a node that was
// never ready turns ready at its first observation without one.
//
// Catch-up marks: a replica behind is judged by the oldest stream sequence
// it lacks among those the prober saw (one mark per observation while it
// is behind), counted from when that sequence was seen, or, for the first
// mark after a pause or a cut (until every stream's leader has answered
// again, asked after its start), from before it, and before the first ready
// from "unknown" (always late: a restarted node's copy is as old as its
// downtime). So a node awake again is stale until it has applied what its
// stream held when it woke, and from then on judged on the time it has
// been awake, not the time it slept; and a replica catching up more slowly
// than its stream grows stays stale past its first target.
package readiness

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of Config's zero fields.
const (
	DefaultMaxLag       = 3 * time.Second
	DefaultFailAfter    = 3 * time.Second
	DefaultRecoverAfter = time.Second
	DefaultMaxSilence   = 3 * time.Second
)

// Config tunes a Machine. The zero Config uses the defaults.
type Config struct {
	// MaxLag bounds how long a replica of this node may trail its stream's
	// last event before the node is stale. Zero means DefaultMaxLag.
	MaxLag time.Duration
	// FailAfter is how long a cluster-wide condition must hold before a
	// ready node turns not ready. Zero means DefaultFailAfter.
	FailAfter time.Duration
	// RecoverAfter is how long a node that is not ready must observe no
	// failing condition before it turns ready. Zero means
	// DefaultRecoverAfter.
	RecoverAfter time.Duration
	// MaxSilence is the longest gap between observations the node still
	// vouches across: past it (the process was paused, or starved) its last
	// verdict is void. Zero means DefaultMaxSilence.
	MaxSilence time.Duration
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.MaxLag, DefaultMaxLag)
	def(&c.FailAfter, DefaultFailAfter)
	def(&c.RecoverAfter, DefaultRecoverAfter)
	def(&c.MaxSilence, DefaultMaxSilence)
	return c
}

// Observation is what one probe saw at At.
type Observation struct {
	At time.Time
	// Serving is false while the gateway starts or shuts down.
	Serving bool
	// Store says why this node's store takes no writes (NATS disconnected,
	// disk full); empty: it takes them. Local: it counts at once.
	Store string
	// Meta says why the JetStream API did not answer (no meta leader, a
	// timeout); empty: it answered. Cluster-wide: held for FailAfter, and
	// only on a node with no tenant open. Where tenants are open, their
	// streams' leaders and replicas say whether it can write and serve:
	// a stream takes writes and elects its leader without the meta
	// leader, whose election (the cut node led the meta group) outlasted
	// the hold on a loaded machine and turned a healthy node 503 while
	// it acknowledged every write.
	Meta string
	// Tenants are the tenants open on this node.
	Tenants []Tenant
	// Rebuilding counts the tenants this node does not serve while it
	// rebuilds a copy whose fingerprint differed from the cluster's
	// majority (docs/CLUSTERING.md, "Divergence"). Local: it counts at once.
	Rebuilding int
	// Starting says what start-up work this node's NATS server still
	// does (a stream or consumer placed on it not yet current with its
	// group: recovering its files, catching up); empty: none. It may name
	// a tenant's stream: the log's detail has it, /readyz's reason not.
	// It counts at once, and only while the node was never ready: a
	// start-up gate, so that a rolling restart that waits for ready
	// before stopping the next node does not take a replica away from a
	// stream while this node's is not current. Once ready, a replica
	// behind is MaxLag's to judge.
	Starting string
}

// Reach is how many of the cluster's servers this node heard from within
// Within, itself included, of how many (internal/reach). The zero Reach:
// no cluster, nothing to count.
type Reach struct {
	Heard, Of int
	Within    time.Duration
	// Partial: this node misses a peer that another peer it hears still
	// hears (a non-transitive partition, internal/reach's Bridge). A
	// tenant whose stream's leader does not answer such a node is its
	// own fault, not an election's: it counts at once.
	Partial bool
}

// cutOff reports whether r is fewer than a majority.
func (r Reach) cutOff() bool { return r.Of > 0 && r.Heard*2 <= r.Of }

// cond is r's failing condition: local, the whole node's.
func (r Reach) cond() cond {
	return plain(fmt.Sprintf("cut off: hears from %d of %d cluster servers (itself included) within %v, fewer than a majority",
		r.Heard, r.Of, r.Within))
}

// Tenant is one tenant's replica as a probe saw it.
type Tenant struct {
	Name string
	// Applied is the stream sequence this node's replica has applied.
	Applied uint64
	// Last is the stream's last sequence as its leader answered; zero
	// where the leader did not answer (Leader says why).
	Last uint64
	// Leader says why the tenant's stream has no reachable leader; empty:
	// its leader answered. Cluster-wide: held for FailAfter, unless
	// NoQuorum.
	Leader string
	// Up and Replicas: how many of the stream's replicas this node can
	// reach (itself included), of how many; zero Replicas: not known.
	// Where Leader is not empty and Up is not a majority of Replicas, no
	// election can succeed and holding is pointless: the tenant counts at
	// once (an ordinary election, a majority alive, is still held).
	Up, Replicas int
	// Asked is when the stream was asked for Last and Leader: a prober
	// that asks in turns keeps a tenant's answer from an earlier
	// observation, and only an answer asked after a cut or a pause began
	// says the stream was seen again since (Observe). Zero: at this
	// observation (At).
	Asked time.Time
}

// askedAt returns when t's answer was asked, at being the observation's
// time.
func (t Tenant) askedAt(at time.Time) time.Time {
	if t.Asked.IsZero() {
		return at
	}
	return t.Asked
}

// noQuorum reports whether t's stream is leaderless with no majority of
// its replicas reachable from this node.
func (t Tenant) noQuorum() bool { return t.Leader != "" && t.Replicas > 0 && t.Up*2 <= t.Replicas }

// Verdict is the machine's answer.
type Verdict struct {
	Ready bool
	// Reason says why not ready, or is empty. It names no tenant: /readyz
	// answers it to anyone.
	Reason string
	// Detail is Reason with the tenants named, for the operator's log.
	Detail string
	// OnlyStarting: the last observation found the node not ready for
	// Observation.Starting alone (no other condition failing or pending),
	// so that it would be ready without it; a cut heard since (ObserveReach)
	// clears it. The start-up gate's bound
	// counts from the first such verdict (cmd/gateway's startGate): a
	// node that spends longer than the bound opening its tenants must
	// not turn ready with its NATS server's start-up work unjudged.
	OnlyStarting bool
}

// TenantStatus is how this node stands for one tenant, for its live
// connections' heartbeats.
type TenantStatus struct {
	// Writable: no condition of the whole node fails (only another
	// tenant's may) and the tenant's stream has had a leader within
	// FailAfter. Without the recovery's wait: a client that moves back
	// early only moves again.
	Writable bool
	Stale    bool // the node's replica trails by more than MaxLag, or the node cannot vouch
}

// behind is a tenant replica's pending catch-up: the stream's last
// sequences it has not applied yet, each with the time since which it is
// known to exist (marks, oldest first, seqs increasing). The catch-up's
// age is the oldest mark's: the replica has lacked that sequence since
// then. Once it applies a mark, the next one counts, observed later:
// after a pause or a cut the first mark counts from before it (what the
// node serves is as old as that), but once the replica has applied the
// stream's last sequence as seen after it, its lag counts from the time
// it has been awake, not the time it slept (docs/OPERATIONS.md,
// "Readiness"). credit is the election time already added to the marks
// (electionCreditLocked), at most FailAfter.
type behind struct {
	marks  []mark
	credit time.Duration
}

// mark is a stream's last sequence seq, known to exist since at; a zero
// at: since before the machine's first observation, how long unknown
// (always late).
type mark struct {
	seq uint64
	at  time.Time
}

// maxMarks bounds a catch-up's marks (one an observation while behind:
// 16 s at the prober's 500 ms); past it two marks merge (coarsen), which
// can only make the replica count as later, never earlier.
const maxMarks = 32

// coarsen merges the two adjacent marks of ms closest in time into one
// with the earlier time of the two (a mark after a pause or a cut may
// count from before the one it follows) and the later's sequence: the
// sequences between them count from the earlier time, later than they are
// by at most that gap. Merging the closest keeps the error near the catch-up's length over
// maxMarks, however long it is: bumping the newest mark's sequence instead
// counted everything seen past maxMarks observations from one time, and a
// replica trailing steadily by 25 s, within a --max-lag of 30 s, was
// judged 33.5 s behind. O(len(ms)).
func coarsen(ms []mark) []mark {
	j := 1
	for i := 2; i < len(ms); i++ {
		if ms[i].at.Sub(ms[i-1].at) < ms[j].at.Sub(ms[j-1].at) {
			j = i
		}
	}
	ms[j-1].seq = ms[j].seq
	if ms[j].at.Before(ms[j-1].at) {
		ms[j-1].at = ms[j].at
	}
	return slices.Delete(ms, j, j+1)
}

// Machine is the readiness state machine. Safe for concurrent use: one
// prober calls Observe, any number of readers call Verdict and Tenant.
type Machine struct {
	cfg Config

	mu           sync.Mutex // guards the fields below
	ready        bool
	reason       string
	detail       string               // reason with the tenants named, for the log
	cause        string               // the failing conditions that last made it not ready
	lastAt       time.Time            // the last observation's; zero: none yet
	firstAt      time.Time            // the first observation's; zero: none yet
	looked       map[string]bool      // tenants whose stream's leader answered before the first ready
	failingSince map[string]time.Time // a held condition's key (a tenant; "" the API) → when it began to fail, continuously
	healthySince time.Time            // zero: not healthy at the last observation
	lag          map[string]behind    // tenant → its pending catch-up
	stale        map[string]bool      // tenant → behind by more than MaxLag
	leaderless   map[string]bool      // tenant → no leader for FailAfter
	nodeDown     bool                 // a condition of the whole node failed at the last observation
	flips        int
	onlyStarting bool      // the last observation's Verdict.OnlyStarting
	reach        Reach     // the last ObserveReach's
	majorityAt   time.Time // the last ObserveReach that saw a majority
	cutFrom      time.Time // non-zero after a cut or a pause until every stream's leader answers again, asked after it: catch-ups seen by then count from it
	healedAt     time.Time // the first ObserveReach that saw a majority after one that did not: an answer asked before it may be a cut-off leader's (endCutLocked)
}

// New returns a Machine that is not ready until observations say so.
func New(cfg Config) *Machine {
	return &Machine{cfg: cfg.withDefaults(), reason: "no readiness observation yet", cause: "no readiness observation yet",
		failingSince: map[string]time.Time{}, lag: map[string]behind{}, looked: map[string]bool{}, stale: map[string]bool{}, leaderless: map[string]bool{}}
}

// Config returns the machine's configuration, defaults filled in.
func (m *Machine) Config() Config { return m.cfg }

// Flips counts the verdict's changes between ready and not ready.
func (m *Machine) Flips() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.flips
}

// Verdict returns the verdict as of now: the last observation's, or not
// ready where none is more recent than MaxSilence.
func (m *Machine) Verdict(now time.Time) Verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	if reason, silent := m.silentLocked(now); silent {
		return Verdict{Reason: reason, Detail: reason}
	}
	return Verdict{Ready: m.ready, Reason: m.reason, Detail: m.detail, OnlyStarting: m.onlyStarting}
}

// Tenant returns how this node stands for tenant as of now.
func (m *Machine) Tenant(tenant string, now time.Time) TenantStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, silent := m.silentLocked(now); silent {
		return TenantStatus{Stale: true}
	}
	cut := m.reach.cutOff()
	return TenantStatus{Writable: !m.nodeDown && !cut && !m.leaderless[tenant], Stale: m.stale[tenant] || cut}
}

// silentLocked reports whether the last observation is too old to vouch
// for, and says so.
func (m *Machine) silentLocked(now time.Time) (string, bool) {
	if m.lastAt.IsZero() {
		return m.reason, true
	}
	if gap := now.Sub(m.lastAt); gap > m.cfg.MaxSilence {
		return fmt.Sprintf("no readiness observation for %v (the process was paused or starved)", gap.Round(time.Millisecond)), true
	}
	return "", false
}

// Observe feeds one observation and returns the verdict after it, and
// whether it changed between ready and not ready. Observations come in
// time order; O(tenants).
func (m *Machine) Observe(o Observation) (Verdict, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	was := m.ready
	var failing []cond
	behindSince := o.At // when a replica first seen behind now began to trail
	electing := m.electingLocked(o.At)
	if !m.lastAt.IsZero() && o.At.Sub(m.lastAt) > m.cfg.MaxSilence {
		// The node did not look for a while: what it said before is void,
		// and what it sees now must hold RecoverAfter again. A replica
		// behind may have trailed since the last look: its lag counts from
		// then, as after a cut, until every stream's leader has answered,
		// or a paused node whose stream's leader is silent at its first
		// look (it led the stream and lost it while paused) would count
		// the pause's missing events from the look where it answers, and
		// serve them as fresh once RecoverAfter passed.
		failing = append(failing, plain(fmt.Sprintf("resumed after %v without observations", o.At.Sub(m.lastAt).Round(time.Millisecond))))
		if m.cutFrom.IsZero() || m.lastAt.Before(m.cutFrom) {
			m.cutFrom = m.lastAt
		}
	}
	m.lastAt = o.At
	if !m.cutFrom.IsZero() && m.cutFrom.Before(behindSince) {
		behindSince = m.cutFrom // what it serves is as old as the cut
	}
	if m.firstAt.IsZero() {
		m.firstAt = o.At
	}
	var unseen string
	if m.reach.cutOff() {
		failing = append(failing, m.reach.cond())
	} else {
		unseen = m.endCutLocked(o)
	}
	failing = append(failing, m.localLocked(o, behindSince, electing)...)
	failing = append(failing, m.partialLocked(o)...)
	held, pending := m.heldLocked(o)
	if unseen != "" {
		pending = append(pending, unseen)
	}
	failing = append(failing, held...)
	m.decideLocked(o.At, failing, pending)
	m.onlyStarting = len(failing) == 1 && failing[0].reason == startingWhy && len(pending) == 0
	if m.ready != was {
		m.flips++
		m.looked = nil // asked only before the first ready
	}
	return Verdict{Ready: m.ready, Reason: m.reason, Detail: m.detail, OnlyStarting: m.onlyStarting}, m.ready != was
}

// ObserveReach feeds whom this node hears from at at (every beat, more
// often than Observe): a node that hears fewer than a majority turns not
// ready at once, without waiting for the next observation. Turning ready
// again is Observe's, after RecoverAfter and once caught up.
func (m *Machine) ObserveReach(at time.Time, r Reach) (Verdict, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	was := m.ready
	if m.reach.cutOff() && !r.cutOff() {
		m.healedAt = at
	}
	m.reach = r
	if !r.cutOff() {
		if !r.Partial {
			m.majorityAt = at
		}
		return Verdict{Ready: m.ready, Reason: m.reason, Detail: m.detail, OnlyStarting: m.onlyStarting}, false
	}
	if m.cutFrom.IsZero() {
		// From the last time it heard a majority; zero while it never
		// has (starting: its catch-up counts as before, from when seen).
		m.cutFrom = m.majorityAt
	}
	m.onlyStarting = false // cut off: not the gate alone
	if m.ready {
		m.decideLocked(at, []cond{r.cond()}, nil)
		m.flips++
	}
	return Verdict{Ready: m.ready, Reason: m.reason, Detail: m.detail}, m.ready != was
}

// partialLocked returns the condition of a node in a non-transitive
// partition whose tenants' stream leaders do not answer: their replicas
// here get nothing, so they are stale at once. After it, catch-ups count
// from the last beat that heard a majority without a partial view.
func (m *Machine) partialLocked(o Observation) []cond {
	if !m.reach.Partial {
		return nil
	}
	var silent []string
	for _, t := range o.Tenants {
		if t.Leader != "" {
			silent = append(silent, t.Name)
			m.stale[t.Name] = true
		}
	}
	if len(silent) == 0 {
		return nil
	}
	if m.cutFrom.IsZero() {
		m.cutFrom = m.majorityAt
	}
	why := fmt.Sprintf("cut from part of the cluster (%d of %d servers heard, one missed that another hears): %d tenant streams' leaders do not answer here",
		m.reach.Heard, m.reach.Of, len(silent))
	return []cond{{why, why + ": " + strings.Join(silent, ", "), true}}
}

// endCutLocked ends a cut or a pause's start (cutFrom) once every
// tenant's stream leader in o answered, asked after it: a replica behind
// now gets its catch-up's first mark from the start (Observe's
// behindSince, taken before), one caught up needs none, and either way
// what follows counts from when it is seen. Waiting instead for one
// observation to find every replica exactly caught up held a node that
// keeps up under load stale for as long as no probe happened to.
//
// An answer asked before the start (a prober asking in turns keeps one
// for the tenants not asked this time) ends nothing: the stream not asked
// since would count the events it missed from its next answer, its turn,
// up to a round of turns late. While such answers remain it returns a
// pending reason, so that the node does not turn ready on them: what it
// serves for those tenants is unjudged since the start. Nor does one
// asked while the node was cut off (before healedAt): a leader on its
// side of the cut, not yet stepped down, answers its own last sequence,
// short of what the majority committed meanwhile. Streams whose leader
// does not answer are the hold's (heldLocked).
func (m *Machine) endCutLocked(o Observation) (pending string) {
	if m.cutFrom.IsZero() {
		return ""
	}
	from := m.cutFrom
	if m.healedAt.After(from) {
		from = m.healedAt
	}
	unseen := 0
	for _, t := range o.Tenants {
		if t.Leader == "" && !t.askedAt(o.At).After(from) {
			unseen++
		}
	}
	switch {
	case unseen > 0:
		return fmt.Sprintf("%d tenant streams not asked since the node was cut off or paused", unseen)
	case !slices.ContainsFunc(o.Tenants, func(t Tenant) bool { return t.Leader != "" }):
		m.cutFrom = time.Time{}
	}
	return ""
}

// startingWhy is the reason of Observation.Starting's condition.
const startingWhy = "starting: this node's NATS server is still catching up its streams and consumers"

// cond is a failing condition: reason names no tenant (/readyz needs no
// token), detail may (the log's); tenants says it is some tenants' only,
// not the whole node's.
type cond struct {
	reason, detail string
	tenants        bool
}

// plain is a condition of the whole node.
func plain(s string) cond { return cond{s, s, false} }

// electingLocked returns the time since the last observation that a
// tenant whose stream's leader does not answer now may be credited as an
// election's (electionCreditLocked): zero where this node is cut off or has
// a partial view (a leader it cannot reach is its own fault there), or
// where it did not look for longer than MaxSilence (a pause is its own).
// Called before Observe records at.
func (m *Machine) electingLocked(at time.Time) time.Duration {
	gap := at.Sub(m.lastAt)
	if m.lastAt.IsZero() || gap <= 0 || gap > m.cfg.MaxSilence || m.reach.cutOff() || m.reach.Partial {
		return 0
	}
	return gap
}

// localLocked returns the failing conditions that count at once: this
// node's own, and replicas behind by more than MaxLag. electing is the
// time to credit the catch-ups of tenants whose stream has no reachable
// leader now (electingLocked).
func (m *Machine) localLocked(o Observation, behindSince time.Time, electing time.Duration) []cond {
	var out []cond
	if !o.Serving {
		out = append(out, plain("not serving (starting or shutting down)"))
	}
	if o.Store != "" {
		out = append(out, plain("store: "+o.Store))
	}
	if o.Starting != "" && m.flips == 0 {
		out = append(out, cond{startingWhy, startingWhy + " (" + o.Starting + ")", false})
	}
	if o.Rebuilding > 0 {
		why := fmt.Sprintf("%d tenants rebuilding: their copy here diverged from the cluster's", o.Rebuilding)
		out = append(out, cond{why, why, true})
	}
	seen := make(map[string]bool, len(o.Tenants))
	var late []string
	var longest time.Duration
	for _, t := range o.Tenants {
		seen[t.Name] = true
		if t.Leader != "" {
			m.electionCreditLocked(t.Name, electing)
		}
		since := behindSince
		if m.flips == 0 && t.Leader == "" && !m.looked[t.Name] {
			// Never ready, the stream's first answer: nothing says how old
			// the copy this node started with is (one restarted after a
			// minute down has a minute to catch up). Behind now, it is
			// stale until it has applied what its stream holds now; then
			// its lag counts from the marks seen since, as after a pause.
			m.looked[t.Name] = true
			since = time.Time{}
		}
		if age, ok := m.trackLocked(t, o.At, since); ok {
			late = append(late, fmt.Sprintf("%s (%v, applied %d)", t.Name, age.Round(time.Millisecond), t.Applied))
			longest = max(longest, age)
		}
	}
	for name := range m.lag {
		if !seen[name] {
			delete(m.lag, name)
			delete(m.stale, name)
		}
	}
	if len(late) > 0 {
		out = append(out, cond{
			fmt.Sprintf("%d tenants' replicas trail their streams past the bound %v (the longest for %v)", len(late), m.cfg.MaxLag, longest.Round(time.Millisecond)),
			"replicas behind their streams: " + strings.Join(late, ", "), true})
	}
	return out
}

// electionCreditLocked moves tenant's pending catch-up, if any, forward by
// d: the time since the last observation, at the end of which its
// stream's leader did not answer while this node heard a majority (an
// election, the whole cluster's, which the hold judges: FailAfter). While
// a stream has no leader nobody commits anything, so its replicas fall no
// further behind the cluster; but a catch-up pending when the leader died
// (a replica that keeps up is a probe behind at every probe) would count
// the election against MaxLag, and a healthy node would turn not ready at
// once after an election shorter than the hold, whose clock starts only
// when a probe has waited out its timeout. The credit of one catch-up is
// bounded by FailAfter, so that a leader answering only now and then (the
// hold never trips) delays a stuck replica's verdict by at most that.
func (m *Machine) electionCreditLocked(tenant string, d time.Duration) {
	b, ok := m.lag[tenant]
	if !ok || d <= 0 {
		return
	}
	d = min(d, m.cfg.FailAfter-b.credit)
	if d <= 0 {
		return
	}
	for i := range b.marks {
		if !b.marks[i].at.IsZero() { // from before the first look: stale however long an election
			b.marks[i].at = b.marks[i].at.Add(d)
		}
	}
	b.credit += d
	m.lag[tenant] = b
}

// trackLocked updates t's pending catch-up and reports how long it has
// trailed and whether that is past MaxLag. A catch-up starts when the
// replica is seen behind the stream's last sequence, with a mark of that
// sequence counted from since (the observation, or after a silence or a
// cut the last look before it); each later observation that sees the
// stream further ahead adds a mark counted likewise; the marks the
// replica has applied drop, and the catch-up ends with the last of them.
// A replica that keeps up under load therefore trails by at most one
// probe interval. Where the leader did not answer (Last 0) the pending
// catch-up, if any, goes on.
func (m *Machine) trackLocked(t Tenant, at, since time.Time) (time.Duration, bool) {
	b := m.lag[t.Name]
	n := 0
	for n < len(b.marks) && b.marks[n].seq <= t.Applied {
		n++
	}
	b.marks = b.marks[n:]
	switch k := len(b.marks); {
	case t.Last <= t.Applied:
	case k == 0:
		b = behind{marks: []mark{{t.Last, since}}}
	case t.Last > b.marks[k-1].seq:
		b.marks = append(b.marks, mark{t.Last, since})
		if len(b.marks) > maxMarks {
			b.marks = coarsen(b.marks)
		}
	}
	if len(b.marks) == 0 {
		delete(m.lag, t.Name)
		m.stale[t.Name] = false
		return 0, false
	}
	m.lag[t.Name] = b
	if b.marks[0].at.IsZero() { // behind since before the first look (Observe)
		m.stale[t.Name] = true
		return at.Sub(m.firstAt), true
	}
	age := at.Sub(b.marks[0].at)
	late := age > m.cfg.MaxLag
	m.stale[t.Name] = late
	return age, late
}

// heldLocked returns the cluster-wide conditions that have failed for
// FailAfter (they count) and those that fail for less (pending), the
// latter as reasons naming no tenant.
func (m *Machine) heldLocked(o Observation) (held []cond, pending []string) {
	now := map[string]string{}
	if o.Meta != "" && len(o.Tenants) == 0 { // see Observation.Meta
		now[""] = o.Meta // the JetStream API's key: no tenant has an empty name
	}
	for _, t := range o.Tenants {
		if t.Leader != "" {
			now[t.Name] = t.Leader
		}
	}
	for key := range m.failingSince {
		if _, ok := now[key]; !ok {
			delete(m.failingSince, key)
		}
	}
	clear(m.leaderless)
	var tenants []string
	waiting := 0
	held = append(held, m.noQuorumLocked(o)...)
	for key, why := range now {
		since, ok := m.failingSince[key]
		if !ok {
			since = o.At
			m.failingSince[key] = since
		}
		d := o.At.Sub(since).Round(time.Millisecond)
		switch {
		case m.leaderless[key]: // no quorum: counted at once above
		case d < m.cfg.FailAfter && key == "":
			pending = append(pending, fmt.Sprintf("JetStream API: %s (for %v)", why, d))
		case d < m.cfg.FailAfter:
			waiting++
		case key == "":
			held = append(held, plain(fmt.Sprintf("JetStream API: %s (for %v)", why, d)))
		default:
			m.leaderless[key] = true
			tenants = append(tenants, fmt.Sprintf("%s (%s, for %v)", key, why, d))
		}
	}
	if waiting > 0 {
		pending = append(pending, fmt.Sprintf("%d tenant streams without a reachable leader yet", waiting))
	}
	if len(tenants) > 0 {
		slices.Sort(tenants)
		held = append(held, cond{
			fmt.Sprintf("%d tenant streams without a reachable leader for %v or more", len(tenants), m.cfg.FailAfter),
			"tenant streams without a reachable leader: " + strings.Join(tenants, ", "), true})
	}
	return held, pending
}

// noQuorumLocked returns, as at most one condition, the tenants whose
// stream is leaderless with no majority of its replicas reachable here
// (Tenant.noQuorum): they count at once, not held, and are marked
// leaderless for heldLocked and Tenant.
func (m *Machine) noQuorumLocked(o Observation) []cond {
	var names []string
	var first Tenant
	for _, t := range o.Tenants {
		if !t.noQuorum() {
			continue
		}
		if len(names) == 0 {
			first = t
		}
		m.leaderless[t.Name] = true
		names = append(names, fmt.Sprintf("%s (%d of %d, %s)", t.Name, t.Up, t.Replicas, t.Leader))
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return []cond{{fmt.Sprintf("no majority of a stream's replicas reachable: %d of %d (%d tenant streams)", first.Up, first.Replicas, len(names)),
		"no majority of a stream's replicas reachable: " + strings.Join(names, ", "), true}}
}

// decideLocked sets the verdict from this observation's failing
// conditions: any turns the node not ready at once; none turns a node that
// is not ready ready once none has failed, pending ones included, for
// RecoverAfter.
func (m *Machine) decideLocked(at time.Time, failing []cond, pending []string) {
	m.nodeDown = slices.ContainsFunc(failing, func(c cond) bool { return !c.tenants })
	if len(failing) > 0 {
		reasons, details := make([]string, len(failing)), make([]string, len(failing))
		for i, c := range failing {
			reasons[i], details[i] = c.reason, c.detail
		}
		m.cause = strings.Join(reasons, "; ")
		m.ready, m.reason, m.detail, m.healthySince = false, m.cause, strings.Join(details, "; "), time.Time{}
		return
	}
	if m.ready {
		return // pending conditions do not count yet: hysteresis
	}
	if len(pending) > 0 {
		m.healthySince = time.Time{}
		waits := strings.Join(pending, "; ")
		if m.flips == 0 {
			m.reason = "waiting: " + waits // never ready yet: what it waits for, not that it saw nothing
		} else {
			// Not "recovering: no failure for ...": one pends, and the
			// quiet spell starts again once it clears.
			m.reason = fmt.Sprintf("recovering: not yet, %s (was: %s)", waits, m.cause)
		}
		m.detail = m.reason
		return
	}
	if m.flips == 0 {
		// Never ready yet: nothing to flap from. A node turns ready at its
		// first observation without a failure, as soon as it started.
		m.ready, m.reason, m.detail = true, "", ""
		return
	}
	if m.healthySince.IsZero() {
		m.healthySince = at
	}
	if ok := at.Sub(m.healthySince); ok < m.cfg.RecoverAfter {
		m.reason = fmt.Sprintf("recovering: no failure for %v of %v (was: %s)", ok.Round(time.Millisecond), m.cfg.RecoverAfter, m.cause)
		m.detail = m.reason
		return
	}
	m.ready, m.reason, m.detail = true, "", ""
}
