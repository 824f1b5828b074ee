package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// Default per-attempt deadlines and budget (see WithAttemptTimeouts and
// WithRetryBudget).
const (
	DefaultReadAttempt  = 2 * time.Second
	DefaultWriteAttempt = 3 * time.Second
	DefaultRetryBudget  = 30 * time.Second
)

// roundBackoff is the first wait between two full rounds over the
// gateways; it doubles each round up to maxRoundBackoff, jittered.
const (
	roundBackoff    = 50 * time.Millisecond
	maxRoundBackoff = time.Second
)

// FailurePenalty is how long a gateway whose attempt failed (no answer
// within the deadline, a refused or broken connection, a 503) goes to the
// end of the order in which the Client's calls try the gateways: a call
// that must move on tries first the gateways not seen failing, so that a
// node cut off a moment ago costs one attempt's deadline, not one per
// call. An answer from the gateway lifts it at once. The order is all it
// changes: a gateway under penalty is still tried, last, and where every
// gateway is under penalty the order is the list's.
const FailurePenalty = 5 * time.Second

// request is one call of the HTTP API.
type request struct {
	method, path string
	query        url.Values
	body, out    any
	// repeatable: sending it again after it may have arrived changes
	// nothing (a read, a PUT, a submission whose every item has an id).
	// Otherwise it is sent again only where it surely did not arrive.
	repeatable bool
}

// do sends a request whose method says whether it may be repeated: GET and
// PUT may, POST and DELETE may not.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	return c.run(ctx, request{method: method, path: path, query: query, body: body, out: out,
		repeatable: method == http.MethodGet || method == http.MethodPut})
}

// run sends r, trying the gateways in turn from the one that answered
// last, each attempt bounded by its own deadline, round after round with
// a short backoff, until an answer that ends it or the budget (ctx, or
// the Client's retry budget where ctx has none) runs out.
func (c *Client) run(ctx context.Context, r request) error {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return fmt.Errorf("client: encode: %w", err)
		}
	}
	tok, err := c.token(ctx)
	if err != nil {
		return fmt.Errorf("client: token: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok && c.budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.budget)
		defer cancel()
	}
	var last error
	var late *flight // an attempt past its deadline, still awaited: see attempt
	defer func() { late.stop() }()
	tries, slow := 0, 0
	var small [8]int // order's buffer, on the stack for up to 8 gateways
	buf := small[:min(len(c.urls), len(small))]
	if len(c.urls) > len(small) {
		buf = make([]int, len(c.urls)) // once a call, not once a round
	}
	for round := 0; ; round++ {
		for _, n := range c.order(time.Now(), buf) {
			var err error
			late, err = c.attempt(ctx, n, r, payload, tok, slow, late)
			wait, again := c.verdict(err, r.repeatable)
			if isGatewayFailure(err) && ctx.Err() == nil { // not the caller's cancel: the gateway's
				c.failedUntil[n].Store(time.Now().Add(FailurePenalty).UnixNano())
			}
			if tries++; !again || tries == c.maxAttempts {
				return err
			}
			if errors.Is(err, context.DeadlineExceeded) {
				slow++
			}
			last = err
			if wait > 0 {
				if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
					return last // Retry-After runs past the budget: the 429 is the answer
				}
				sleep(ctx, wait)
			}
			if ctx.Err() != nil {
				return budgetError(ctx, r, last)
			}
		}
		if !sleep(ctx, rand.N(min(maxRoundBackoff, roundBackoff<<min(round, 10)))+1) {
			return budgetError(ctx, r, last)
		}
	}
}

// order writes into buf, len(c.urls) long, the gateways in the order a
// round of a call tries them, and returns it: from the one that answered
// the Client last, around the list, with those under FailurePenalty at now
// moved to the end, in the same order. Each gateway's penalty is read
// once, so that a penalty set or lifted meanwhile by another call never
// lists a gateway twice or not at all. O(gateways), no allocation: buf is
// the calling call's own (run's), never shared between calls.
func (c *Client) order(now time.Time, buf []int) []int {
	first, t, k := int(c.next.Load()), now.UnixNano(), len(c.urls)
	front, back := 0, k // buf[:front] not failed; buf[back:] failed, in reverse
	for i := range k {
		n := (first + i) % k
		if c.failedUntil[n].Load() > t {
			back--
			buf[back] = n
		} else {
			buf[front] = n
			front++
		}
	}
	slices.Reverse(buf[back:])
	return buf
}

// isGatewayFailure reports whether err says that the gateway could not
// serve: no answer (a deadline, a refused or broken connection) or a 503.
func isGatewayFailure(err error) bool {
	var te *transportError
	return errors.As(err, &te) || isUnavailable(err)
}

// verdict decides on an attempt's outcome: whether to try again (on the
// next gateway), after how long, or to answer err.
func (c *Client) verdict(err error, repeatable bool) (wait time.Duration, again bool) {
	var e *Error
	var te *transportError
	switch {
	case err == nil:
		return 0, false
	case errors.As(err, &e):
		switch {
		case e.Status == http.StatusServiceUnavailable:
			return 0, repeatable // the outcome is unknown: only a repeatable call goes again
		case e.Status == http.StatusTooManyRequests && e.RetryAfter > 0:
			return e.RetryAfter, true // refused before it was handled: any call may go again
		}
		return 0, false // the gateway's answer: 4xx, or a 5xx that another try would not mend
	case errors.As(err, &te):
		return 0, te.dial || repeatable // a refused connection never carried the request
	}
	return 0, false // the answer came but did not decode
}

// attempt sends r to gateway n, bounded by the attempt's deadline, and
// decodes the answer. A gateway that answered becomes the next call's
// first. The deadline doubles with each earlier attempt of the call that
// ran out of time (slow), up to 8 times: a paused gateway costs one
// deadline, but a cluster that is slow everywhere (a leader election, which
// the gateway rides out within --write-timeout) is given the time to
// answer rather than have its writes abandoned and sent again.
//
// A repeatable request that runs out of its deadline is not cancelled: it
// goes on for one deadline more as late, while the next attempt runs: a
// late success that arrives while that attempt is in flight answers the
// call. It is not awaited across a backoff or a Retry-After wait, and a
// call whose next attempt fails for good returns that error and cancels it
// (a repeatable request is safe to send again). A gateway that was only slow
// (its write waited for an election) then answers just after its deadline,
// rather than the call waiting out the next gateway's deadline too when
// that one is paused. At most two requests of a call are in flight.
func (c *Client) attempt(ctx context.Context, n int, r request, payload []byte, tok string, slow int, late *flight) (*flight, error) {
	timeout := c.writeAttempt
	if r.method == http.MethodGet {
		timeout = c.readAttempt
	}
	timeout <<= min(slow, 3)
	hard := timeout
	if r.repeatable {
		hard *= 2
	}
	f := c.launch(ctx, n, r, payload, tok, hard)
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		var lateDone <-chan error
		if late != nil {
			lateDone = late.done
		}
		select {
		case err := <-f.done:
			return late, f.answer(r, err)
		case err := <-lateDone:
			err = late.answer(r, err)
			if late = nil; err == nil {
				f.stop()
				return nil, nil
			}
		case <-t.C:
			if !r.repeatable {
				return late, f.answer(r, <-f.done) // its context ends now too
			}
			late.stop()
			return f, &transportError{gateway: c.urls[n], err: context.DeadlineExceeded}
		}
	}
}

// flight is one attempt's request, sent on its own goroutine so that it
// may outlive its deadline (see attempt). Its owner receives from done or
// calls stop, which cancels it and waits for it.
type flight struct {
	done   chan error // one answer; nil once received
	out    any        // the answer's value: r.out's type, its own
	cancel context.CancelFunc
}

// answer notes that f's answer err was received and, where it succeeded,
// copies its value into r.out: two flights of a call never decode into
// the same value.
func (f *flight) answer(r request, err error) error {
	f.done = nil
	if err == nil && r.out != nil {
		reflect.ValueOf(r.out).Elem().Set(reflect.ValueOf(f.out).Elem())
	}
	return err
}

// launch sends r to gateway n on a new goroutine, bounded by hard.
func (c *Client) launch(ctx context.Context, n int, r request, payload []byte, tok string, hard time.Duration) *flight {
	actx, cancel := context.WithTimeout(ctx, hard)
	f := &flight{done: make(chan error, 1), cancel: cancel}
	if r.out != nil {
		f.out = reflect.New(reflect.TypeOf(r.out).Elem()).Interface()
	}
	go func() {
		defer cancel()
		f.done <- c.send(actx, n, r, payload, tok, f.out)
	}()
	return f
}

// stop cancels f and waits for its goroutine; a nil f, or one whose answer
// was received, is a no-op but for the cancel.
func (f *flight) stop() {
	if f == nil {
		return
	}
	f.cancel()
	if f.done != nil {
		<-f.done
		f.done = nil
	}
}

// send makes one request of r to gateway n within actx and decodes its
// answer into out.
func (c *Client) send(actx context.Context, n int, r request, payload []byte, tok string, out any) error {
	u := c.urls[n] + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	// A request that never got a connection never left: a dial that the
	// deadline ended in the handshake is reported as the context's error,
	// not as a dial's, so the trace tells it (net/http sends a request
	// again on a new connection only where nothing of it was written).
	// Only a transport that traced the wait (GetConn) is believed when it
	// reports no connection: one of the caller's own (WithHTTPClient) may
	// call no hook at all, and its silence must not send a write again.
	var getting, connected atomic.Bool
	tctx := httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
		GetConn: func(string) { getting.Store(true) },
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})
	req, err := http.NewRequestWithContext(tctx, r.method, u, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &transportError{gateway: c.urls[n], err: err, dial: getting.Load() && !connected.Load() || isDialError(err)}
	}
	err = decode(resp, out)
	var te *transportError
	if errors.As(err, &te) {
		te.gateway = c.urls[n]
		return err
	}
	if !isUnavailable(err) {
		c.failedUntil[n].Store(0) // it answered: its penalty ends
		if c.next.Load() != uint32(n) {
			c.next.Store(uint32(n))
		}
	}
	return err
}

// isUnavailable reports whether err is a 503: that gateway answered, but
// cannot serve, so it does not become the next call's first.
func isUnavailable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusServiceUnavailable
}

// transportError is an attempt that got no answer: the connection was
// refused or failed, or the attempt's deadline passed.
type transportError struct {
	gateway string
	err     error
	dial    bool // the connection was never made: the request did not leave
}

func (e *transportError) Error() string { return fmt.Sprintf("client: %s: %v", e.gateway, e.err) }
func (e *transportError) Unwrap() error { return e.err }

// isDialError reports whether err is a failure to connect: the request
// never left, so another gateway may take it.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// budgetError is the answer when the budget ran out: ctx's error with the
// last attempt's, so that errors.Is finds the deadline and errors.As the
// gateway's *Error where one answered.
func budgetError(ctx context.Context, r request, last error) error {
	if last == nil {
		return fmt.Errorf("client: %s %s: %w", r.method, r.path, context.Cause(ctx))
	}
	return fmt.Errorf("client: %s %s: %w; the last attempt: %w", r.method, r.path, context.Cause(ctx), last)
}

// sleep waits d, or less where ctx ends first: then it reports false.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 where
// absent or unreadable.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
