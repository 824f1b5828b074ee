package ledger

import (
	"fmt"
	"math"
	"time"
)

// Notifications. When a board ends, when a day, week or month window
// closes, and when a submission is quarantined, the hub publishes a
// Notification (package webhook delivers it). This file builds them from
// the state; the hub publishes them and remembers what it published.
//
// Every node derives the same notifications from the same state: each
// carries an ID made of what it is about ("board.ended:weekly:1796342400000"),
// unique within its tenant (receivers deduplicate on it: it is the
// webhook-id). Two tenants may have the same ID (both have a board
// "weekly"), so what the hub deduplicates on across tenants is DedupID,
// the tenant and the ID: each is stored once whichever nodes publish it,
// and one tenant's notification never stands for another's.
//
// Timing: a board's end and a window's close are final FinalAfter after
// the time (a write accepted just before may still arrive), so their
// notifications are due then, with the final rows (DueNotifications, and
// NextDue for when to look again). A quarantine is due when the node
// applies it (Outcome.Held, QuarantineNote).

// The notifications' limits.
const (
	NotifyDedup = 24 * time.Hour // ids remembered: a notification older than this is not published again
	notifyRows  = 100            // rows of a board.ended or window.closed notification
)

// Notification is one notification, as published (JSON).
type Notification struct {
	ID     string `json:"id"`
	Type   string `json:"type"` // board.ended, window.closed, submission.quarantined
	Tenant string `json:"tenant"`
	Board  string `json:"board"`
	// Window names the window: "all" for a board's end where it keeps
	// all, else the window's kind and first day ("day:2026-11-22").
	Window string      `json:"window,omitempty"`
	At     string      `json:"at"` // what it is about happened then (RFC 3339, UTC)
	Seq    uint64      `json:"seq,omitempty"`
	Total  int         `json:"total,omitempty"`
	Rows   []NotifyRow `json:"rows,omitempty"`
	// A quarantined submission.
	QID      string  `json:"qid,omitempty"`
	Member   string  `json:"member,omitempty"`
	Score    float64 `json:"score,omitempty"`
	Subscore float64 `json:"subscore,omitempty"`
	Reason   string  `json:"reason,omitempty"`
}

// DedupID returns the id n is deduplicated on among every tenant's
// notifications: its tenant, a slash, and its ID ("t1/board.ended:weekly:1796342400000").
// Unambiguous: a tenant name has no slash (names.Pattern).
func (n Notification) DedupID() string { return n.Tenant + "/" + n.ID }

// NotifyRow is a ranked row of a notification, with its prize.
type NotifyRow struct {
	Rank     int     `json:"rank"`
	Member   string  `json:"member"`
	Score    float64 `json:"score"`
	Subscore float64 `json:"subscore"`
	Name     string  `json:"name,omitempty"`
	Prize    string  `json:"prize,omitempty"`
}

// QuarantineNote returns the submission.quarantined notification of h,
// held on board of tenant.
func QuarantineNote(tenant, board string, h Held) Notification {
	return Notification{
		ID: fmt.Sprintf("submission.quarantined:%s:%d", board, h.QID), Type: "submission.quarantined",
		Tenant: tenant, Board: board, At: FormatTime(h.At), QID: fmt.Sprint(h.QID), Member: h.Member,
		Score: h.Score, Subscore: h.Subscore, Reason: h.Reason.String(),
	}
}

// DueNotifications returns the board.ended and window.closed
// notifications of s due at now (unix ms: final, and at most NotifyDedup
// old) that sent does not report as published. Read lock. O(boards ×
// kinds).
func (s *State) DueNotifications(tenant string, now int64, sent func(string) bool) []Notification {
	var out []Notification
	settle := FinalAfter.Milliseconds()
	for _, name := range s.sortedBoards() {
		bs := s.boards[name]
		if bs.ends != 0 && now >= bs.ends+settle && now-bs.ends < NotifyDedup.Milliseconds() {
			id := fmt.Sprintf("board.ended:%s:%d", name, bs.ends)
			if !sent(id) {
				k := bs.cal.keyAt(bs.settings.primaryKind(), bs.ends-1)
				out = append(out, s.closeNote(tenant, name, bs, k, id, "board.ended", bs.ends))
			}
		}
		for _, kn := range bs.settings.Windows {
			k, _ := parseKind(kn)
			if k == kindAll {
				continue
			}
			cur := bs.cal.keyAt(k, now-settle) // the newest window closed settle ago or more is the one before it
			closed := bs.cal.back(cur, 1)
			if now-cur.start >= NotifyDedup.Milliseconds() || bs.windows[closed] == nil {
				continue
			}
			id := fmt.Sprintf("window.closed:%s:%s:%d", name, k, closed.start)
			if !sent(id) {
				out = append(out, s.closeNote(tenant, name, bs, closed, id, "window.closed", cur.start))
			}
		}
	}
	return out
}

// closeNote builds a board.ended or window.closed notification of window
// k of board name: its top rows with prizes.
func (s *State) closeNote(tenant, name string, bs *boardState, k windowKey, id, typ string, at int64) Notification {
	n := Notification{ID: id, Type: typ, Tenant: tenant, Board: name, Window: bs.cal.name(k), At: FormatTime(at)}
	w := bs.windows[k]
	if w == nil {
		return n
	}
	v := View{ix: s.ix, w: w, profiles: s.profiles, final: bs.final}
	n.Seq, n.Total = w.seq, w.b.Len()
	for _, r := range v.Top(0, notifyRows) {
		n.Rows = append(n.Rows, NotifyRow{Rank: r.Rank, Member: r.Member, Score: r.Score, Subscore: r.Subscore,
			Name: r.Profile.Name, Prize: bs.settings.prizeFor(r.Rank)})
	}
	return n
}

// NextDue returns the earliest time after now (unix ms) at which a
// board.ended or window.closed notification of s may come due, or
// math.MaxInt64 where none will until an event changes the schedule
// (Outcome.Schedule). Read lock. O(boards × kinds).
func (s *State) NextDue(now int64) int64 {
	next := int64(math.MaxInt64)
	settle := FinalAfter.Milliseconds()
	for _, bs := range s.boards {
		if bs.ends != 0 && bs.ends+settle > now {
			next = min(next, bs.ends+settle)
		}
		for _, kn := range bs.settings.Windows {
			if k, _ := parseKind(kn); k != kindAll {
				// The window open settle ago closes at the next one's start.
				next = min(next, bs.cal.back(bs.cal.keyAt(k, now-settle), -1).start+settle)
			}
		}
	}
	return next
}

// NoteCursor is where a walk of quarantine notifications (HeldNotes)
// resumes: boards by name from Board, and on Board the QIDs after After.
// The zero NoteCursor starts at the first board.
type NoteCursor struct {
	Board string
	After uint64
}

// heldWalk bounds the held submissions one HeldNotes call visits, so that
// a read lock is never held for a whole flood's walk.
const heldWalk = 100_000

// HeldNotes returns up to limit submission.quarantined notifications of
// the submissions held at now (at most NotifyDedup old) that sent does not
// report as published, walking from c; the cursor to resume from; and
// whether the walk reached the end. It is how a notifier that could not
// queue every quarantine as it was applied derives them again from the
// state. Read lock. O(boards log boards + visited), at most heldWalk
// visited.
func (s *State) HeldNotes(tenant string, now int64, c NoteCursor, limit int, sent func(string) bool) ([]Notification, NoteCursor, bool) {
	var out []Notification
	visited := 0
	for _, name := range s.sortedBoards() {
		if name < c.Board {
			continue
		}
		if name > c.Board {
			c = NoteCursor{Board: name}
		}
		for more := true; more; {
			var rows []Held
			rows, more = s.boards[name].quarantine.page(c.After, MaxHeldPage)
			for _, h := range rows {
				c.After = h.QID
				if visited++; now-h.At > NotifyDedup.Milliseconds() {
					continue
				}
				if n := QuarantineNote(tenant, name, h); !sent(n.ID) {
					out = append(out, n)
				}
				if len(out) >= limit || visited >= heldWalk {
					return out, c, false
				}
			}
		}
	}
	return out, c, true
}
