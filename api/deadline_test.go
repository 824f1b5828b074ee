package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSlowBodyCutOff: a body that does not arrive within ReadTimeout does
// not hold the connection: the gateway answers or closes well before the
// client would have finished, and never with a 5xx.
func TestSlowBodyCutOff(t *testing.T) {
	e := newRawEnv(t, Config{ReadTimeout: 300 * time.Millisecond})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/slow", tok, `{}`)
	c, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, "POST /v1/boards/slow/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+tok+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"member\":\"p1\",")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	took := time.Since(start)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Errorf("slow body answered %d", resp.StatusCode)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the gateway still waits for the body after %v", took)
	}
	if took > 5*time.Second {
		t.Fatalf("slow body held %v with a read timeout of 300ms", took)
	}
	t.Logf("slow body ended after %v: %v", took.Round(time.Millisecond), err)
	// A body that arrives in time is served, and the deadline does not
	// outlive it: the next request on the same connection is served too.
	c2, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	br := bufio.NewReader(c2)
	body := `{"member":"p1","score":1}`
	for i := range 2 {
		io.WriteString(c2, "POST /v1/boards/slow/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+tok+
			"\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		c2.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
}

// TestRefusedBodyNotAwaited: a request without valid credentials is
// answered 401 at once and its connection closed, without waiting for the
// body the client is still (slowly) sending.
func TestRefusedBodyNotAwaited(t *testing.T) {
	e := newRawEnv(t, Config{ReadTimeout: time.Minute})
	for _, auth := range []string{"", "Authorization: Bearer not-a-token\r\n"} {
		c, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		io.WriteString(c, "POST /v1/boards/b/scores HTTP/1.1\r\nHost: x\r\n"+auth+"Content-Length: 1000\r\n\r\n{\"member\":")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 401 {
			t.Fatalf("refused slow body (%q): %v %v", auth, resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		if _, err := br.ReadByte(); err != io.EOF || time.Since(start) > 5*time.Second {
			t.Fatalf("connection after the 401 (%q): %v after %v; want closed at once", auth, err, time.Since(start))
		}
		c.Close()
	}
}
