package fingerprint

// Verdict is what a Tally concludes about one node at one checkpoint.
type Verdict int

const (
	// Undecided: no majority of the cluster has published the same sum at
	// that sequence yet, or the node has not published its own.
	Undecided Verdict = iota
	// Agrees: the node's sum is the majority's.
	Agrees
	// Diverged: a majority published one sum and the node another.
	Diverged
)

// String names v for logs.
func (v Verdict) String() string {
	switch v {
	case Agrees:
		return "agrees"
	case Diverged:
		return "diverged"
	}
	return "undecided"
}

// keepCheckpoints is how many recent checkpoint sequences a Tally holds;
// a report older than all of them is dropped. At DefaultEvery a node may
// lag 16 checkpoints (1.6 M events) and still be judged.
const keepCheckpoints = 16

// Tally collects one tenant's reports from every node and judges a node
// against the majority of the cluster. Memory: at most keepCheckpoints
// sequences of at most 2×members reports each.
type Tally struct {
	members int                       // nodes in the cluster: a majority is members/2+1 of them
	bySeq   map[uint64]map[string]Sum // checkpoint sequence -> node -> sum
}

// NewTally returns a tally for a cluster of members nodes (at least 1).
func NewTally(members int) *Tally {
	return &Tally{members: max(members, 1), bySeq: make(map[uint64]map[string]Sum)}
}

// Record notes node's checkpoint. A node's second report at the same
// sequence replaces its first. It returns false when the report was
// dropped: older than every kept sequence, or one node too many.
func (t *Tally) Record(node string, c Checkpoint) bool {
	sums, ok := t.bySeq[c.Seq]
	if !ok {
		if len(t.bySeq) >= keepCheckpoints && c.Seq < t.oldest() {
			return false
		}
		sums = make(map[string]Sum)
		t.bySeq[c.Seq] = sums
		t.prune()
	}
	if _, seen := sums[node]; !seen && len(sums) >= 2*t.members {
		return false
	}
	sums[node] = c.Sum
	return true
}

// Judge returns node's verdict at seq, and the majority's sum when there
// is one. Two sums that both reach a majority (possible only with more
// reporters than members: a renamed node) decide nothing.
func (t *Tally) Judge(node string, seq uint64) (Verdict, Sum) {
	sums := t.bySeq[seq]
	votes := make(map[Sum]int, 2)
	for _, s := range sums {
		votes[s]++
	}
	var major Sum
	found := 0
	for s, n := range votes {
		if n >= t.members/2+1 {
			major, found = s, found+1
		}
	}
	if found != 1 {
		return Undecided, Sum{}
	}
	own, ok := sums[node]
	switch {
	case !ok:
		return Undecided, major
	case own == major:
		return Agrees, major
	}
	return Diverged, major
}

// oldest returns the smallest kept sequence.
func (t *Tally) oldest() uint64 {
	first := true
	var o uint64
	for seq := range t.bySeq {
		if first || seq < o {
			o, first = seq, false
		}
	}
	return o
}

// prune drops the oldest sequences beyond keepCheckpoints.
func (t *Tally) prune() {
	for len(t.bySeq) > keepCheckpoints {
		delete(t.bySeq, t.oldest())
	}
}
