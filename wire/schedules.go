package wire

// Schedules of tournament boards (PROTOCOL.md "Schedules").

// ScheduleSpec is the body of PUT /v1/schedules/{schedule}: a recurrence
// in local time, each board's duration, and the template of its settings
// (starts_at and ends_at are each occurrence's, so the template leaves
// them out).
type ScheduleSpec struct {
	Every       string    `json:"every"`                  // day, week or month
	Weekday     string    `json:"weekday,omitempty"`      // every week: monday … sunday
	Day         int       `json:"day,omitempty"`          // every month: 1..28
	At          string    `json:"at"`                     // local start time, HH:MM
	TimeZone    string    `json:"time_zone,omitempty"`    // IANA name; default UTC
	Duration    string    `json:"duration"`               // each board's time, a duration such as "1h30m": 1m..744h
	CreateAhead string    `json:"create_ahead,omitempty"` // how long before its start a board is created: 0s..168h; default 1h
	Paused      bool      `json:"paused,omitempty"`       // create no board while true
	Settings    *Settings `json:"settings,omitempty"`     // each board's settings, as PUT /v1/boards/{board} takes them
}

// Schedule answers PUT and GET /v1/schedules/{schedule}, and is each item
// of ScheduleList: the normalized schedule and what it created.
type Schedule struct {
	Name        string   `json:"name"`
	Every       string   `json:"every"`
	Weekday     string   `json:"weekday,omitempty"`
	Day         int      `json:"day,omitempty"`
	At          string   `json:"at"`
	TimeZone    string   `json:"time_zone"`
	Duration    string   `json:"duration"`     // normalized, such as "1h0m0s"
	CreateAhead string   `json:"create_ahead"` // normalized
	Paused      bool     `json:"paused"`
	Settings    Settings `json:"settings"` // normalized, without starts_at and ends_at
	// Next is the start of the next occurrence whose board is to be
	// created (UTC with milliseconds), NextBoard that board's name; absent
	// while paused.
	Next      string `json:"next,omitempty"`
	NextBoard string `json:"next_board,omitempty"`
	// Last is the start of the last occurrence fired, LastBoard the board
	// it created, LastError why it created none (its name taken, the
	// tenant's board limit).
	Last      string `json:"last,omitempty"`
	LastBoard string `json:"last_board,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// ScheduleList answers GET /v1/schedules: every schedule of the tenant,
// by name.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
}

// Unscheduled answers DELETE /v1/schedules/{schedule}: the boards it
// created stay.
type Unscheduled struct {
	Unscheduled string `json:"unscheduled"` // the schedule
}
