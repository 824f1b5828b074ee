package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/wire"
)

// Client calls one or more gateways of one deployment. Safe for concurrent
// use.
type Client struct {
	urls []string
	next atomic.Uint32 // the gateway the next call tries first: the last that answered
	// failedUntil is, per gateway, the Unix time in ns until which it is
	// tried last (FailurePenalty); 0: not.
	failedUntil []atomic.Int64
	token       func(ctx context.Context) (string, error)
	http        *http.Client

	readAttempt, writeAttempt time.Duration // per-attempt deadlines
	budget                    time.Duration // a call's budget where its ctx has no deadline
	maxAttempts               int           // 0: as many as the budget allows
	noIDs                     bool          // Submit leaves missing ids missing
}

// Option configures a Client.
type Option func(*Client)

// WithToken makes every call carry token.
func WithToken(token string) Option {
	return func(c *Client) { c.token = func(context.Context) (string, error) { return token, nil } }
}

// WithTokenFunc makes every call ask f for its token (a refreshing source);
// Watch asks again on every reconnect.
func WithTokenFunc(f func(ctx context.Context) (string, error)) Option {
	return func(c *Client) { c.token = f }
}

// WithHTTPClient sets the HTTP client (timeouts, TLS, proxies). The default
// has a 30 s timeout, and a transport that all Clients without one share:
// net/http's default, but for HTTP/2 pings (see DeadConnection).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithAttemptTimeouts sets the deadline of one attempt of a read (GET)
// and of a write: a gateway that hangs costs one attempt, then the call
// moves to the next gateway. Zero keeps the default (DefaultReadAttempt,
// DefaultWriteAttempt). A write slower than its deadline is sent again
// elsewhere, which is safe (see Failover in the package doc) but adds load:
// raise it for batches that take long.
func WithAttemptTimeouts(read, write time.Duration) Option {
	return func(c *Client) {
		c.readAttempt = cmp.Or(read, c.readAttempt)
		c.writeAttempt = cmp.Or(write, c.writeAttempt)
	}
}

// WithRetryBudget bounds a call whose ctx has no deadline: its attempts
// stop after d (default DefaultRetryBudget; 0 or less: none, such a call
// goes on until ctx is cancelled). A ctx with a deadline is its own budget.
func WithRetryBudget(d time.Duration) Option { return func(c *Client) { c.budget = d } }

// WithMaxAttempts caps the attempts of one call (0: as many as the budget
// allows; 1: never retried, the first answer or failure is the call's: for
// load generators that count a gateway's failures as its own).
func WithMaxAttempts(n int) Option { return func(c *Client) { c.maxAttempts = n } }

// WithoutGeneratedIDs makes Submit send scores without an ID as they are.
// Such a submission is then sent again only where it surely did not arrive
// (a refused connection, a 429 with Retry-After): a 503 or a timeout is
// the caller's to handle. By default Submit gives each such score a random
// ID before the first attempt, so that any retry applies it once; each ID
// costs the gateways about 185 bytes per node while they keep it
// (--idempotency-retention).
func WithoutGeneratedIDs() Option { return func(c *Client) { c.noIDs = true } }

// DeadConnection is how long the default transport waits before it closes
// an HTTP/2 connection on which nothing arrived: after half of it without a
// frame it sends a ping, and closes the connection where the ping is not
// answered within the other half. Without it a connection whose peer
// vanished without a word (a host gone, a middlebox that forgot the flow)
// would carry every later request to that gateway, each ending only at its
// attempt's deadline, until TCP gives up minutes later: an attempt's
// deadline cancels only its HTTP/2 stream, not the connection (over
// HTTP/1.1 it closes the connection). A transport of your own
// (WithHTTPClient) wants the same: http.Transport's HTTP2 field.
const DeadConnection = 4 * time.Second

// defaultTransport is the transport of the Clients without WithHTTPClient:
// one connection pool, as http.DefaultTransport's, which it copies when
// this package is initialised (a later change of http.DefaultTransport
// does not reach it).
var defaultTransport = pingingTransport(http.DefaultTransport)

// pingingTransport returns a copy of rt with the HTTP/2 pings of
// DeadConnection, or rt itself where it is not an *http.Transport (a
// program that replaced http.DefaultTransport before this package's init,
// with an instrumented or a test transport): that one is kept, without
// the pings, rather than the SDK panicking at init.
func pingingTransport(rt http.RoundTripper) http.RoundTripper {
	t, ok := rt.(*http.Transport)
	if !ok {
		return rt
	}
	t = t.Clone()
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: DeadConnection / 2, PingTimeout: DeadConnection / 2}
	return t
}

// New returns a Client of the gateways at urls (base URLs such as
// "https://rank.example.com"). A call moves to the next gateway where one
// does not answer, answers 503 or hangs past the attempt's deadline, as far
// as that is safe: see Failover in the package doc.
func New(urls []string, opts ...Option) (*Client, error) {
	if len(urls) == 0 {
		return nil, errors.New("client: no gateway URL")
	}
	c := &Client{http: &http.Client{Timeout: 30 * time.Second, Transport: defaultTransport},
		readAttempt: DefaultReadAttempt, writeAttempt: DefaultWriteAttempt, budget: DefaultRetryBudget}
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("client: %q is not an http or https URL", u)
		}
		c.urls = append(c.urls, strings.TrimRight(u, "/"))
	}
	c.failedUntil = make([]atomic.Int64, len(c.urls))
	for _, o := range opts {
		o(c)
	}
	if c.token == nil {
		return nil, errors.New("client: no token: pass WithToken or WithTokenFunc")
	}
	return c, nil
}

// Error is an error answer of the gateway.
type Error struct {
	Status  int    // the HTTP status
	Code    string // the protocol's code: bad_request, unauthorized, forbidden, not_found, method_not_allowed, conflict, rate_limited, too_large, unavailable, internal
	Message string // names the field at fault
	// RetryAfter is the wait the gateway asked for (Retry-After), if any.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("rankwire: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsCode reports whether err is an *Error with code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// decode reads resp: a 2xx body into out, else an *Error.
func decode(resp *http.Response, out any) error {
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return &transportError{err: fmt.Errorf("read answer: %w", err)}
	}
	if resp.StatusCode/100 != 2 {
		out := &Error{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
		var e wire.ErrorBody
		if json.Unmarshal(raw, &e) != nil || e.Error.Code == "" {
			out.Code, out.Message = string(wire.CodeInternal), strings.TrimSpace(string(raw))
		} else {
			out.Code, out.Message = string(e.Error.Code), e.Error.Message
		}
		return out
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("client: decode answer: %w", err)
	}
	return nil
}

func boardPath(board string, rest ...string) string {
	return "/v1/boards/" + url.PathEscape(board) + strings.Join(rest, "")
}

// The protocol's bodies, as package wire defines them (docs/PROTOCOL.md).
type (
	// Row is a ranked entry with the member's profile where it has one.
	Row = wire.Row
	// Page is a read's answer: the board-window's version and size and
	// rows; Next, where set, reads on (ReadOptions.After); Count, a score
	// range's size, is set by Scores only.
	Page = wire.Page
	// MemberRow is one row with its board-window's seq and total.
	MemberRow = wire.MemberRow
	// Prize is a range of ranks and its prize label.
	Prize = wire.Prize
	// Rules quarantine suspicious submissions; nil fields do not check.
	Rules = wire.Rules
	// Settings are a board's settings (PUT /v1/boards/{board}); zero
	// fields take the gateway's defaults.
	Settings = wire.Settings
	// Board is a board as the gateway shows it.
	Board = wire.Board
	// Score is one submission. ID, where set, makes a retry safe: the
	// board answers a repeat with the original result. Submit sets one
	// where it is missing (WithoutGeneratedIDs).
	Score = wire.Score
	// Result is one submission's outcome.
	Result = wire.Result
	// StandingRow is a row of the standings with its prize.
	StandingRow = wire.StandingRow
	// Standings are a board's standings: Final once its end passed for good.
	Standings = wire.Standings
	// Held is a quarantined submission.
	Held = wire.Held
	// Profile is a member's public profile.
	Profile = wire.Profile
	// Identity is a member with its aliases.
	Identity = wire.Identity
	// PersonalData is what a tenant holds about a member (an export).
	PersonalData = wire.PersonalData
	// Erasure is what an erasure of a member's personal data erased.
	Erasure = wire.Erasure
	// HistoryPoint is a point of a member's rank history: Window for a
	// past window's final standing, At for one of its own recent changes.
	HistoryPoint = wire.HistoryPoint
	// Tenant is the tenant's limits in force and its use on the gateway asked.
	Tenant = wire.Tenant
)

// Window picks a board-window: Kind all (""), day, week or month, and At a
// past one (zero: the current).
type Window struct {
	Kind string
	At   time.Time
}

func (w Window) query(q url.Values) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if w.Kind != "" {
		q.Set("window", w.Kind)
	}
	if !w.At.IsZero() {
		q.Set("at", w.At.UTC().Format(time.DateOnly))
	}
	return q
}

// PutBoard creates board or changes its settings.
func (c *Client) PutBoard(ctx context.Context, board string, s Settings) (Board, error) {
	var out Board
	return out, c.do(ctx, http.MethodPut, boardPath(board), nil, s, &out)
}

// Board reads a board's settings and size.
func (c *Client) Board(ctx context.Context, board string) (Board, error) {
	var out Board
	return out, c.do(ctx, http.MethodGet, boardPath(board), nil, nil, &out)
}

// DeleteBoard deletes a board with its windows.
func (c *Client) DeleteBoard(ctx context.Context, board string) error {
	return c.do(ctx, http.MethodDelete, boardPath(board), nil, nil, nil)
}

// Reset empties a board's all window.
func (c *Client) Reset(ctx context.Context, board string) error {
	return c.do(ctx, http.MethodPost, boardPath(board, "/reset"), nil, nil, nil)
}

// MaxBatch is the most scores one Submit takes.
const MaxBatch = wire.MaxBatch

// Submit submits up to MaxBatch scores in one durable batch and returns
// one result each, in order. Scores without an ID get a random one first
// (unless WithoutGeneratedIDs), so that the call may go to another gateway
// after a 503 or a timeout and still apply once; a result of such a score
// never says Duplicate. A score with the caller's ID may say Duplicate
// where an earlier attempt of the same call stored it.
func (c *Client) Submit(ctx context.Context, board string, scores ...Score) ([]Result, error) {
	sub, generated := c.withIDs(scores)
	var out wire.Results
	err := c.run(ctx, request{method: http.MethodPost, path: boardPath(board, "/scores"), body: sub, out: &out,
		repeatable: generated != nil || allHaveIDs(scores)})
	for i := range out.Results {
		if i < len(generated) && generated[i] {
			out.Results[i].Duplicate = false // the original was this call's own earlier attempt
		}
	}
	return out.Results, err
}

// ReadOptions page a read: Limit rows (0: the gateway's default) from rank
// Offset+1, or after the cursor After (a Page's Next).
type ReadOptions struct {
	Window
	Limit  int
	Offset int
	After  string
}

func (o ReadOptions) query() url.Values {
	q := o.Window.query(nil)
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	if o.After != "" {
		q.Set("after", o.After)
	}
	return q
}

// Top reads rows from the top of a board-window.
func (c *Client) Top(ctx context.Context, board string, o ReadOptions) (Page, error) {
	var out Page
	return out, c.do(ctx, http.MethodGet, boardPath(board, "/top"), o.query(), nil, &out)
}

// Scores reads the rows whose score lies in [min, max], with their count.
func (c *Client) Scores(ctx context.Context, board string, min, max float64, o ReadOptions) (Page, error) {
	q := o.query()
	q.Set("min", strconv.FormatFloat(min, 'g', -1, 64))
	q.Set("max", strconv.FormatFloat(max, 'g', -1, 64))
	var out Page
	return out, c.do(ctx, http.MethodGet, boardPath(board, "/scores"), q, nil, &out)
}

// Around reads radius rows above and below member, its own included.
func (c *Client) Around(ctx context.Context, board, member string, radius int, w Window) (Page, error) {
	q := w.query(nil)
	q.Set("radius", strconv.Itoa(radius))
	var out Page
	return out, c.do(ctx, http.MethodGet, boardPath(board, "/members/", url.PathEscape(member), "/around"), q, nil, &out)
}

// Member reads member's row with its top_percent; an *Error not_found
// where it has none.
func (c *Client) Member(ctx context.Context, board, member string, w Window) (MemberRow, error) {
	var out MemberRow
	return out, c.do(ctx, http.MethodGet, boardPath(board, "/members/", url.PathEscape(member)), w.query(nil), nil, &out)
}

// ScoreRank returns the rank a new entry with score and subscore would take.
func (c *Client) ScoreRank(ctx context.Context, board string, score, subscore float64) (rank, total int, err error) {
	q := url.Values{"score": {strconv.FormatFloat(score, 'g', -1, 64)}, "subscore": {strconv.FormatFloat(subscore, 'g', -1, 64)}}
	var out wire.ScoreRank
	err = c.do(ctx, http.MethodGet, boardPath(board, "/score-rank"), q, nil, &out)
	return out.Rank, out.Total, err
}

// Standings reads limit rows of a board's standings from rank offset+1.
func (c *Client) Standings(ctx context.Context, board string, offset, limit int) (Standings, error) {
	q := url.Values{"offset": {strconv.Itoa(offset)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out Standings
	return out, c.do(ctx, http.MethodGet, boardPath(board, "/standings"), q, nil, &out)
}

// Quarantine lists up to limit held submissions after the qid after ("":
// from the first), and the qid to read on from ("" at the end).
func (c *Client) Quarantine(ctx context.Context, board, after string, limit int) ([]Held, string, error) {
	q := ReadOptions{Limit: limit, After: after}.query() // the same two parameters
	var out wire.Quarantine
	err := c.do(ctx, http.MethodGet, boardPath(board, "/quarantine"), q, nil, &out)
	return out.Rows, out.Next, err
}

// Approve ranks a held submission now and returns its result.
func (c *Client) Approve(ctx context.Context, board, qid string) (Result, error) {
	var out Result
	return out, c.do(ctx, http.MethodPost, boardPath(board, "/quarantine/", url.PathEscape(qid), "/approve"), nil, nil, &out)
}

// Reject drops a held submission.
func (c *Client) Reject(ctx context.Context, board, qid string) error {
	return c.do(ctx, http.MethodPost, boardPath(board, "/quarantine/", url.PathEscape(qid), "/reject"), nil, nil, nil)
}

// PutProfile sets member's profile.
func (c *Client) PutProfile(ctx context.Context, member string, p Profile) (Profile, error) {
	var out Profile
	return out, c.do(ctx, http.MethodPut, "/v1/members/"+url.PathEscape(member)+"/profile", nil, p, &out)
}

// Profile reads member's profile.
func (c *Client) Profile(ctx context.Context, member string) (Profile, error) {
	var out Profile
	return out, c.do(ctx, http.MethodGet, "/v1/members/"+url.PathEscape(member)+"/profile", nil, nil, &out)
}

// PersonalData exports what the tenant holds about member (role admin):
// its id, aliases, profile and entries.
func (c *Client) PersonalData(ctx context.Context, member string) (PersonalData, error) {
	var out PersonalData
	return out, c.do(ctx, http.MethodGet, "/v1/members/"+url.PathEscape(member)+"/personal-data", nil, nil, &out)
}

// ErasePersonalData erases member's profile and aliases on every board
// (role admin); its id and scores stay. Asking again erases nothing more.
func (c *Client) ErasePersonalData(ctx context.Context, member string) (Erasure, error) {
	var out Erasure
	return out, c.do(ctx, http.MethodDelete, "/v1/members/"+url.PathEscape(member)+"/personal-data", nil, nil, &out)
}

// Link links aliases to member (merging members where the token may).
func (c *Client) Link(ctx context.Context, member string, aliases ...string) (Identity, error) {
	var out Identity
	return out, c.do(ctx, http.MethodPost, "/v1/identities", nil, Identity{Member: member, Aliases: aliases}, &out)
}

// Boards lists up to limit boards the token reaches, by name, after the
// board after ("": from the first), and the name to read on from ("" at the
// end).
func (c *Client) Boards(ctx context.Context, after string, limit int) ([]Board, string, error) {
	q := ReadOptions{Limit: limit, After: after}.query() // the same two parameters
	var out wire.BoardList
	err := c.do(ctx, http.MethodGet, "/v1/boards", q, nil, &out)
	return out.Boards, out.Next, err
}

// AtRank reads the row at rank; an *Error not_found past the end.
func (c *Client) AtRank(ctx context.Context, board string, rank int, w Window) (MemberRow, error) {
	var out MemberRow
	return out, c.do(ctx, http.MethodGet, boardPath(board, "/ranks/", strconv.Itoa(rank)), w.query(nil), nil, &out)
}

// Members reads the rows of some members (ids or aliases), in rank order;
// those without an entry are left out.
func (c *Client) Members(ctx context.Context, board string, ids []string, w Window) (Page, error) {
	q := w.query(nil)
	q.Set("ids", strings.Join(ids, ","))
	var out Page
	return out, c.do(ctx, http.MethodGet, boardPath(board, "/members"), q, nil, &out)
}

// RemoveMember removes member's entries from every window of board.
func (c *Client) RemoveMember(ctx context.Context, board, member string) error {
	return c.do(ctx, http.MethodDelete, boardPath(board, "/members/", url.PathEscape(member)), nil, nil, nil)
}

// History reads member's rank history for window kind: "" (or all) for its
// recent changes, day, week or month for past windows' standings.
func (c *Client) History(ctx context.Context, board, member, kind string) ([]HistoryPoint, error) {
	var out wire.History
	err := c.do(ctx, http.MethodGet, boardPath(board, "/members/", url.PathEscape(member), "/history"), Window{Kind: kind}.query(nil), nil, &out)
	return out.Points, err
}

// Identity reads the member an id or alias names, with its aliases.
func (c *Client) Identity(ctx context.Context, id string) (Identity, error) {
	var out Identity
	return out, c.do(ctx, http.MethodGet, "/v1/identities/"+url.PathEscape(id), nil, nil, &out)
}

// Tenant reads the tenant's limits and use (role admin).
func (c *Client) Tenant(ctx context.Context) (Tenant, error) {
	var out Tenant
	return out, c.do(ctx, http.MethodGet, "/v1/tenant", nil, nil, &out)
}

// Status splits a call's error the way a load generator counts it: the
// HTTP status of an answer (200 for none), or 0 and the error where no
// answer came (the transport failed).
func Status(err error) (int, error) {
	var e *Error
	switch {
	case err == nil:
		return http.StatusOK, nil
	case errors.As(err, &e) && e.Status != 0:
		return e.Status, nil
	}
	return 0, err
}
