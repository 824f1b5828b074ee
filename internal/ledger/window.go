package ledger

import "time"

// kind is a window kind: all, day, week (ISO, Monday first) or month, UTC.
type kind uint8

const (
	kindAll kind = iota
	kindDay
	kindWeek
	kindMonth
)

var kindNames = [...]string{"all", "day", "week", "month"}

// String returns the kind's name: all, day, week or month.
func (k kind) String() string { return kindNames[k] }

// parseKind turns a window name into a kind; "" means all.
func parseKind(s string) (kind, bool) {
	if s == "" {
		return kindAll, true
	}
	for k, name := range kindNames {
		if s == name {
			return kind(k), true
		}
	}
	return 0, false
}

// windowKind parses a window name as a read gives it; ErrBadRequest
// naming the window where it is not a kind.
func windowKind(name string) (kind, error) {
	k, ok := parseKind(name)
	if !ok {
		return 0, errorf(ErrBadRequest, "window: %q is not one of all, day, week, month", Clip(name))
	}
	return k, nil
}

// CheckWindow fails with ErrBadRequest, naming the window, where name is
// not a window kind ("" means all).
func CheckWindow(name string) error {
	_, err := windowKind(name)
	return err
}

// windowKey names one board-window: its kind and its start in unix ms UTC
// (0 for all).
type windowKey struct {
	kind  kind
	start int64
}

// keyAt returns the key of the window of kind k holding time ms (unix ms).
// Pure calendar arithmetic in UTC: deterministic on every node.
func keyAt(k kind, ms int64) windowKey {
	if k == kindAll {
		return windowKey{kindAll, 0}
	}
	t := time.UnixMilli(ms).UTC()
	y, m, d := t.Date()
	switch k {
	case kindDay:
		t = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case kindWeek:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		t = time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
	case kindMonth:
		t = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
	return windowKey{k, t.UnixMilli()}
}

// back returns the key n windows before w (all stays all).
func (w windowKey) back(n int) windowKey {
	t := time.UnixMilli(w.start).UTC()
	switch w.kind {
	case kindDay:
		t = t.AddDate(0, 0, -n)
	case kindWeek:
		t = t.AddDate(0, 0, -7*n)
	case kindMonth:
		t = t.AddDate(0, -n, 0)
	default:
		return w
	}
	return windowKey{w.kind, t.UnixMilli()}
}

// compare orders keys by kind, then start: the order snapshots write them in.
func (w windowKey) compare(o windowKey) int {
	switch {
	case w.kind != o.kind:
		return int(w.kind) - int(o.kind)
	case w.start < o.start:
		return -1
	case w.start > o.start:
		return 1
	}
	return 0
}
