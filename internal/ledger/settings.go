package ledger

import (
	"slices"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/internal/tzdb"
)

// DefaultRetention is how many past windows of each kind a board keeps when
// its settings say 0.
const DefaultRetention = 8

// MaxRetention bounds Settings.Retention, and with it the windows a board
// keeps: at most 3 × (MaxRetention + 1) + 1.
const MaxRetention = 1000

// Settings are a board's settings, as PUT /v1/boards/{board} carries them.
// Empty fields take the protocol's defaults (see normalize).
type Settings struct {
	Order         string   `json:"order"`          // "desc" (default) or "asc"
	SubscoreOrder string   `json:"subscore_order"` // "desc" (default) or "asc"
	Policy        string   `json:"policy"`         // best (default), latest, sum, first
	Tiebreak      string   `json:"tiebreak"`       // "earliest" (default) or "latest"
	Windows       []string `json:"windows"`        // kinds kept; default ["all"]
	Retention     int      `json:"retention"`      // past windows kept per kind; 0 means 8

	// The calendar of the day, week and month windows (window_calendar.go):
	// they turn over at local midnight of TimeZone, an IANA name from the
	// database embedded in the binary ("UTC" by default), and weeks begin
	// on WeekStarts ("monday", the default, or "sunday").
	TimeZone   string `json:"time_zone"`
	WeekStarts string `json:"week_starts"`

	// A tournament (tournament.go): submissions accepted before StartsAt
	// or at or after EndsAt are refused; Prizes label ranges of ranks.
	StartsAt string  `json:"starts_at,omitempty"` // RFC 3339; empty: open from creation
	EndsAt   string  `json:"ends_at,omitempty"`   // RFC 3339; empty: never ends
	Prizes   []Prize `json:"prizes,omitempty"`

	// Rules quarantine suspicious submissions instead of ranking them
	// (rules.go); nil checks nothing.
	Rules *Rules `json:"rules,omitempty"`
}

// Normalize validates s and fills in the defaults, so that equal settings
// compare equal. The error wraps ErrBadRequest and names the field.
func (s Settings) Normalize() (Settings, error) { return s.normalize() }

func (s Settings) normalize() (Settings, error) {
	cfg, err := s.boardConfig()
	if err != nil {
		return s, err
	}
	s.Order, s.SubscoreOrder = cfg.Order.String(), cfg.SubscoreOrder.String()
	s.Policy, s.Tiebreak = cfg.Policy.String(), cfg.Tiebreak.String()
	if s.Windows, err = normalizeWindows(s.Windows); err != nil {
		return s, err
	}
	if s.Retention < 0 || s.Retention > MaxRetention {
		return s, errorf(ErrBadRequest, "retention: %d is not in 0..%d", s.Retention, MaxRetention)
	}
	if s.Retention == 0 {
		s.Retention = DefaultRetention
	}
	if err := s.normalizeCalendar(); err != nil {
		return s, err
	}
	s.Prizes = slices.Clone(s.Prizes)
	if err := s.normalizeTournament(); err != nil {
		return s, err
	}
	if s.Rules, err = s.Rules.normalize(); err != nil {
		return s, err
	}
	return s, nil
}

func normalizeWindows(ws []string) ([]string, error) {
	if len(ws) == 0 {
		return []string{"all"}, nil
	}
	out := make([]string, 0, len(ws))
	for i, w := range ws {
		if _, ok := parseKind(w); !ok || w == "" {
			return nil, errorf(ErrBadRequest, "windows[%d]: %q is not one of all, day, week, month", i, Clip(w))
		}
		if slices.Contains(out, w) {
			return nil, errorf(ErrBadRequest, "windows[%d]: %q repeats", i, Clip(w))
		}
		out = append(out, w)
	}
	return out, nil
}

// normalizeCalendar fills in and checks TimeZone and WeekStarts. A zone
// is one of the embedded database (internal/tzdb), never the host's.
func (s *Settings) normalizeCalendar() error {
	if s.TimeZone == "" {
		s.TimeZone = "UTC"
	}
	if _, err := tzdb.Load(s.TimeZone); err != nil {
		return errorf(ErrBadRequest, "time_zone: %q is not an IANA time zone name (such as \"Europe/Malta\")", Clip(s.TimeZone))
	}
	switch s.WeekStarts {
	case "":
		s.WeekStarts = "monday"
	case "monday", "sunday":
	default:
		return errorf(ErrBadRequest, "week_starts: %q is neither \"monday\" nor \"sunday\"", Clip(s.WeekStarts))
	}
	return nil
}

// calendarChange names the calendar field that differs from a to b, if
// any, with its old and new values, for a conflict message.
func calendarChange(a, b Settings) (field, from, to string, changed bool) {
	switch {
	case a.TimeZone != b.TimeZone:
		return "time_zone", a.TimeZone, b.TimeZone, true
	case a.WeekStarts != b.WeekStarts:
		return "week_starts", a.WeekStarts, b.WeekStarts, true
	}
	return "", "", "", false
}

// boardConfig parses the ordering fields into a board.Config without
// CompareMembers. The error wraps ErrBadRequest.
func (s Settings) boardConfig() (board.Config, error) {
	var cfg board.Config
	var err error
	if cfg.Order, err = board.ParseOrder(s.Order); err != nil {
		return cfg, errorf(ErrBadRequest, "order: %q is neither \"desc\" nor \"asc\"", Clip(s.Order))
	}
	if cfg.SubscoreOrder, err = board.ParseOrder(s.SubscoreOrder); err != nil {
		return cfg, errorf(ErrBadRequest, "subscore_order: %q is neither \"desc\" nor \"asc\"", Clip(s.SubscoreOrder))
	}
	if cfg.Policy, err = board.ParsePolicy(s.Policy); err != nil {
		return cfg, errorf(ErrBadRequest, "policy: %q is not one of best, latest, sum, first", Clip(s.Policy))
	}
	if cfg.Tiebreak, err = board.ParseTiebreak(s.Tiebreak); err != nil {
		return cfg, errorf(ErrBadRequest, "tiebreak: %q is neither \"earliest\" nor \"latest\"", Clip(s.Tiebreak))
	}
	return cfg, nil
}

// sameOrdering reports whether two normalized settings rank entries alike,
// so that a board with entries may switch from one to the other.
func sameOrdering(a, b Settings) bool {
	return a.Order == b.Order && a.SubscoreOrder == b.SubscoreOrder &&
		a.Policy == b.Policy && a.Tiebreak == b.Tiebreak
}

// orderingChange names the first ordering field that differs from a to b,
// with its old and new values, for a conflict message.
func orderingChange(a, b Settings) (field, from, to string) {
	switch {
	case a.Order != b.Order:
		return "order", a.Order, b.Order
	case a.SubscoreOrder != b.SubscoreOrder:
		return "subscore_order", a.SubscoreOrder, b.SubscoreOrder
	case a.Policy != b.Policy:
		return "policy", a.Policy, b.Policy
	}
	return "tiebreak", a.Tiebreak, b.Tiebreak
}

// primaryKind is the window kind whose rank a submission reports: all when
// kept, else the first kept kind.
func (s Settings) primaryKind() kind {
	if slices.Contains(s.Windows, "all") {
		return kindAll
	}
	k, _ := parseKind(s.Windows[0])
	return k
}
