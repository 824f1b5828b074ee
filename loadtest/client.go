package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// Target is the gateway under load and how to reach it.
type Target struct {
	// URL is the gateway's base URL, e.g. http://127.0.0.1:8080, or the
	// base URLs of several gateways of one cluster separated by commas:
	// requests and WebSocket connections are then spread over them in turn.
	// Every host must be a loopback address.
	URL string
	// Token is a bearer token with the admin role.
	Token string
	// Board is the board to load. It is created (PUT) where missing.
	Board string
	// Metrics is the base URL of the gateway's metrics listener
	// (--metrics-addr), e.g. http://127.0.0.1:9464; the API port serves no
	// /metrics. Empty: the figures read from metrics are reported absent.
	Metrics string
}

// client sends the load's HTTP requests through the Go SDK
// (github.com/rankwire/rankwire/client): one SDK client per gateway,
// taken in turn, so that the load spreads evenly and a gateway's failures
// count as its own (the SDK alone would pass over a gateway that is down).
// Keep-alive connections, one per concurrent worker, no compression. Safe
// for concurrent use.
type client struct {
	sdks  []*rwclient.Client // one per gateway, in the order of Target.URL
	next  atomic.Uint64      // the request count, which picks the gateway
	board string
	http  *http.Client
	// counter, where set, reads the board's size (members) instead of the
	// next gateway's client.
	counter *rwclient.Client
}

// baseURLs splits t.URL into its gateways' base URLs, each checked to be on
// loopback.
func (t Target) baseURLs() ([]string, error) {
	var out []string
	for _, u := range strings.Split(t.URL, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u == "" {
			continue
		}
		if err := checkLoopback(u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("loadtest: url %q: want one base URL or several separated by commas", t.URL)
	}
	return out, nil
}

// checkLoopback refuses any target whose host is not a loopback IP.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("loadtest: url: %w", err)
	}
	ip := net.ParseIP(u.Hostname())
	if u.Scheme != "http" || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("loadtest: url %q: want http:// and a loopback IP (127.0.0.0/8 or ::1)", raw)
	}
	return nil
}

func newClient(t Target, conns int) (*client, error) {
	bases, err := t.baseURLs()
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
		DisableCompression: true, IdleConnTimeout: time.Minute,
	}
	c := &client{board: t.Board, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	for _, b := range bases {
		// One attempt, ids as given, the HTTP client's 30 s: what the
		// gateway answers is what is counted (Failover is another load).
		sdk, err := rwclient.New([]string{b}, rwclient.WithToken(t.Token), rwclient.WithHTTPClient(c.http),
			rwclient.WithMaxAttempts(1), rwclient.WithoutGeneratedIDs(), rwclient.WithAttemptTimeouts(30*time.Second, 30*time.Second))
		if err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
		c.sdks = append(c.sdks, sdk)
	}
	return c, nil
}

func (c *client) close() { c.http.CloseIdleConnections() }

// sdk returns the next gateway's client, in turn.
func (c *client) sdk() *rwclient.Client { return c.sdks[(c.next.Add(1)-1)%uint64(len(c.sdks))] }

// submit sends items as one batch to the next gateway and returns the
// HTTP status (0 where no answer came) and a transport error.
func (c *client) submit(ctx context.Context, items []score) (int, error) {
	_, err := c.sdk().Submit(ctx, c.board, toScores(items)...)
	return rwclient.Status(err)
}

// toScores converts items to the SDK's submissions.
func toScores(items []score) []rwclient.Score {
	scores := make([]rwclient.Score, len(items))
	for i, it := range items {
		scores[i] = rwclient.Score{Member: it.Member, Score: it.Score}
	}
	return scores
}

// read sends one read of kind (top, member, around) of member m to the
// next gateway and returns the status as submit does.
func (c *client) read(ctx context.Context, kind, m string) (int, error) {
	sdk := c.sdk()
	var err error
	switch kind {
	case "top":
		_, err = sdk.Top(ctx, c.board, rwclient.ReadOptions{Limit: 10})
	case "member":
		_, err = sdk.Member(ctx, c.board, m, rwclient.Window{})
	default:
		_, err = sdk.Around(ctx, c.board, m, 5, rwclient.Window{})
	}
	return rwclient.Status(err)
}

// ensureBoard creates the board with settings (a PROTOCOL.md settings
// object). An existing board with other settings answers 409, which is
// fine: the load only needs the board to exist.
func (c *client) ensureBoard(ctx context.Context, settings string) error {
	var set rwclient.Settings
	if err := json.Unmarshal([]byte(settings), &set); err != nil {
		return fmt.Errorf("loadtest: board settings %s: %w", settings, err)
	}
	_, err := c.sdk().PutBoard(ctx, c.board, set)
	if err != nil && !rwclient.IsCode(err, "conflict") {
		return fmt.Errorf("loadtest: create board %q: %w", c.board, err)
	}
	return nil
}

// awaitBoard waits until every gateway serves the board: on a cluster the
// others open a new tenant within milliseconds of its creation, and a
// load that started at once would count their 404s. At most 10 s.
func (c *client) awaitBoard(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for _, sdk := range c.sdks {
		for {
			_, err := sdk.Board(ctx, c.board)
			if err == nil {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("loadtest: board %q not served by every gateway after 10 s: %v", c.board, err)
			}
			time.Sleep(20 * time.Millisecond) // polling a remote gateway: no event to wait on
		}
	}
	return nil
}

// members returns the board's member count (all window).
func (c *client) members(ctx context.Context) (int, error) {
	sdk := c.counter
	if sdk == nil {
		sdk = c.sdk()
	}
	// On a cluster the board's creation may not have reached the node
	// asked yet: a 404 is asked again, for at most 5 s.
	for range 50 {
		b, err := sdk.Board(ctx, c.board)
		var ce *rwclient.Error
		if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("loadtest: board info: %w", err)
		}
		return b.Members, nil
	}
	return 0, fmt.Errorf("loadtest: board info: board %q not found for 5 s", c.board)
}

// score is one submission as the protocol spells it.
type score struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

// classify names a failed request for the error table: its HTTP status,
// or "transport" for a failure without one.
func classify(status int, err error) string {
	if err != nil && status == 0 {
		return "transport"
	}
	if err != nil {
		return "decode"
	}
	return strconv.Itoa(status)
}
