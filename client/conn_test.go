package client

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// pattern is n bytes of a recognisable pattern.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// TestConnReadRaw: Dial authenticates first, ReadRaw returns each message
// whole whatever its size, reuses its buffer without keeping a large one,
// and a message over the 1 MiB limit ends the connection.
func TestConnReadRaw(t *testing.T) {
	sizes := []int{0, 1, 1023, 1024, 1025, 5000, readKeep + 1, 700, 3 << 20}
	first := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		_, auth, err := c.Read(r.Context())
		if err != nil {
			return
		}
		first <- auth
		for _, n := range sizes {
			if c.Write(r.Context(), websocket.MessageText, pattern(n)) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := New([]string{srv.URL}, WithToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := cl.Dial(ctx, srv.URL, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if auth := <-first; string(auth) != `{"type":"auth","token":"tok"}` {
		t.Fatalf("the first message %s, want the auth message", auth)
	}
	for _, n := range sizes[:len(sizes)-1] {
		got, err := conn.ReadRaw(ctx)
		if err != nil || !bytes.Equal(got, pattern(n)) {
			t.Fatalf("read of %d bytes: %d bytes, %v", n, len(got), err)
		}
		if cap(conn.buf) > readKeep {
			t.Errorf("after %d bytes the connection keeps a buffer of %d", n, cap(conn.buf))
		}
	}
	if _, err := conn.ReadRaw(ctx); !errors.Is(err, websocket.ErrMessageTooBig) {
		t.Errorf("read of 3 MiB with a 1 MiB limit: %v", err)
	}
}
