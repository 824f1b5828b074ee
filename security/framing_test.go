package security

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// framingAttacks are requests that a client library would not send: each
// is written byte for byte on a fresh connection with a valid admin token
// of tenant A where it has a {TOKEN}.
var framingAttacks = []struct{ name, raw string }{
	{"content-length and chunked (smuggling)", "POST /v1/boards/poker-final/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n" +
		"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/boards/zebra-vault/top HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"two content-lengths", "POST /v1/boards/poker-final/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n" +
		"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"},
	{"negative content-length", "POST /v1/boards/poker-final/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: -1\r\n\r\n{}"},
	{"huge content-length", "POST /v1/boards/poker-final/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 99999999999999999999\r\n\r\n{}"},
	{"bad chunk size", "POST /v1/boards/poker-final/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"},
	{"header of 2 MiB", "GET /v1/boards/poker-final/top HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nX-Pad: " + strings.Repeat("p", 2<<20) + "\r\n\r\n"},
	{"absolute URI of another host", "GET http://evil.example/v1/boards/zebra-vault/top HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"},
	{"HTTP/1.0 without Host", "GET /v1/boards/zebra-vault/top HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"},
	{"two Authorization headers", "GET /v1/boards/zebra-vault/top HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nAuthorization: Bearer {TOKEN_B}\r\n\r\n"},
	{"NUL in the path", "GET /v1/boards/zebra-vault\x00/top HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"},
	{"bare LF line ends", "GET /v1/boards/zebra-vault/top HTTP/1.1\nHost: x\nAuthorization: Bearer {TOKEN}\n\n"},
	{"unknown HTTP version", "GET /v1/boards/zebra-vault/top HTTP/9.9\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"},
	{"garbage request line", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS hello on plain HTTP\r\n\r\n"},
}

// TestRequestFramingAttacks: requests smuggled, duplicated, oversized or
// broken at the HTTP framing level are refused with a 4xx or a closed
// connection, never a 5xx and never with tenant B's data, whichever token
// or Host they carry; nothing is applied.
func TestRequestFramingAttacks(t *testing.T) {
	r := strings.NewReplacer("{TOKEN}", tokA(t, base(tenantA, "admin")), "{TOKEN_B}", tokB(t, base(tenantB, "admin")))
	for _, a := range framingAttacks {
		status, body := rawHTTP(t, r.Replace(a.raw))
		t.Logf("%s: %d", a.name, status)
		// 505 is the one 5xx a client causes: Go's server answers it to an
		// HTTP version it does not speak, before any handler runs.
		if status >= 500 && status != 505 || status != 0 && status < 400 {
			t.Errorf("%s: %d %.200q, want a 4xx or a closed connection", a.name, status, body)
		}
		noLeak(t, a.name, scrub(body)) // the board name the request sent may be quoted back
	}
	assertUntouched(t)
}

// rawHTTP writes raw on a new connection and reads the gateway's first
// response within 3 s; it returns its status (0 where none came) and its
// bytes as read.
func rawHTTP(t *testing.T, raw string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", gw.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	go func() { _, _ = io.WriteString(c, raw) }() // the gateway may stop reading part way
	var seen strings.Builder
	resp, err := http.ReadResponse(bufio.NewReader(io.TeeReader(c, &seen)), nil)
	if err != nil {
		return 0, seen.String()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, seen.String()
}

// TestPipelinedRequestsCarryNoAuth: on one keep-alive connection, a
// request with tenant B's token, then one with none, then one with tenant
// A's: the connection carries no authority from one request to the next
// (200, 401, then 404 as for a board nobody has), and only the first
// answer holds B's rows.
func TestPipelinedRequestsCarryNoAuth(t *testing.T) {
	get := func(token string) string {
		h := "GET /v1/boards/zebra-vault/top HTTP/1.1\r\nHost: x\r\n"
		if token != "" {
			h += "Authorization: Bearer " + token + "\r\n"
		}
		return h + "\r\n"
	}
	c, err := net.DialTimeout("tcp", gw.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	raw := get(tokB(t, base(tenantB, "read"))) + get("") + get(tokA(t, base(tenantA, "read")))
	go func() { _, _ = io.WriteString(c, raw) }()
	br := bufio.NewReader(c)
	for i, want := range []int{200, 401, 404} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("answer %d: %d %.200s, want %d", i, resp.StatusCode, body, want)
		}
		if i > 0 {
			noLeak(t, "a pipelined request after B's", scrub(string(body)))
		}
	}
}
