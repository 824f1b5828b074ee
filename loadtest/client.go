package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
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

// client is an HTTP client tuned for load: keep-alive connections, one per
// concurrent worker, no compression. Safe for concurrent use.
type client struct {
	bases []string      // the gateways' base URLs, taken in turn
	next  atomic.Uint64 // the request count, which picks the base
	auth  string
	board string
	http  *http.Client
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
	return &client{
		bases: bases, auth: "Bearer " + t.Token, board: t.Board,
		http: &http.Client{Transport: tr, Timeout: 30 * time.Second},
	}, nil
}

func (c *client) close() { c.http.CloseIdleConnections() }

// do sends one request and reads the whole reply. It returns the status,
// or an error for a transport failure.
func (c *client) do(ctx context.Context, method, path string, body []byte, into any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	base := c.bases[(c.next.Add(1)-1)%uint64(len(c.bases))]
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", c.auth)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if into == nil || resp.StatusCode != http.StatusOK {
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(into)
}

func (c *client) boardPath() string { return "/v1/boards/" + url.PathEscape(c.board) }

// ensureBoard creates the board with settings (a PROTOCOL.md settings
// object). An existing board with other settings answers 409, which is
// fine: the load only needs the board to exist.
func (c *client) ensureBoard(ctx context.Context, settings string) error {
	st, err := c.do(ctx, http.MethodPut, c.boardPath(), []byte(settings), nil)
	if err != nil {
		return fmt.Errorf("loadtest: create board: %w", err)
	}
	if st != http.StatusOK && st != http.StatusCreated && st != http.StatusConflict {
		return fmt.Errorf("loadtest: create board %q: HTTP %d", c.board, st)
	}
	return nil
}

// awaitBoard waits until every gateway serves the board: on a cluster the
// others open a new tenant within milliseconds of its creation, and a
// load that started at once would count their 404s. At most 10 s.
func (c *client) awaitBoard(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for range c.bases {
		for {
			st, err := c.do(ctx, http.MethodGet, c.boardPath(), nil, nil) // the next gateway in turn
			if err == nil && st == http.StatusOK {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("loadtest: board %q not served by every gateway after 10 s: HTTP %d, %v", c.board, st, err)
			}
			time.Sleep(20 * time.Millisecond) // polling a remote gateway: no event to wait on
		}
	}
	return nil
}

// members returns the board's member count (all window).
func (c *client) members(ctx context.Context) (int, error) {
	var info struct {
		Members int `json:"members"`
	}
	st, err := c.do(ctx, http.MethodGet, c.boardPath(), nil, &info)
	if err == nil && st != http.StatusOK {
		err = fmt.Errorf("HTTP %d", st)
	}
	if err != nil {
		return 0, fmt.Errorf("loadtest: board info: %w", err)
	}
	return info.Members, nil
}

// score is one submission as the protocol spells it.
type score struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

// submitBody encodes one submission, or a batch where len(items) > 1.
func submitBody(items []score) []byte {
	var v any = items[0]
	if len(items) > 1 {
		v = struct {
			Scores []score `json:"scores"`
		}{items}
	}
	b, _ := json.Marshal(v) // cannot fail: strings and finite floats
	return b
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
