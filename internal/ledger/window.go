package ledger

// kind is a window kind: all, day, week or month, cut in a board's
// calendar (window_calendar.go).
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

// windowKey names one board-window: its kind and its start, the first
// instant of its first local day in unix ms (0 for all). Its name
// (calendar.name) is the local date of that day.
type windowKey struct {
	kind  kind
	start int64
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
