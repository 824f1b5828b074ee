package api

import (
	"io"
	"net/http"
	"strings"
	"time"
)

// closeUnread closes the connection of a request outside /v1 whose answer
// begins before its body was read to the end (issue 21 item 3). No route
// outside /v1 reads a body, and none takes a token: net/http would
// otherwise read up to 256 KiB of the body after the answer, with the
// connection busy (http.StateActive) all along, so that a body that never
// ends, sent to such a path (POST /nope, GET /healthz with a
// Content-Length), held its connection for the whole --read-timeout where
// the connection budget cannot evict it. The answer gets "Connection:
// close" and the connection's read deadline is set in the past, which
// ends that read at once: what authenticate's refuseConn does for a /v1
// request without valid credentials, so that every route treats a client
// without a token alike. An authenticated /v1 request keeps net/http's
// handling (the rest of the body is read within --read-timeout, and a
// large one closes the connection gracefully): its client proved who it
// is. Requests without a body pass untouched, and so does /v1/ws. O(1) per
// request and per write.
func closeUnread(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || underV1(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		body := &eofBody{ReadCloser: r.Body}
		r.Body = body
		uw := &unreadWriter{ResponseWriter: w, body: body}
		next.ServeHTTP(uw, r)
		uw.began() // a handler that wrote nothing: net/http answers 200 next
	})
}

// underV1 reports whether path is routed to the /v1 group or to /v1/ws:
// the prefix that routes chooses by.
func underV1(path string) bool { return path == "/v1" || strings.HasPrefix(path, "/v1/") }

// eofBody remembers whether its reader returned io.EOF: net/http's body
// returns it with the last bytes of a body with a Content-Length.
type eofBody struct {
	io.ReadCloser
	eof bool
}

func (b *eofBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// unreadWriter closes the connection when the answer begins before the
// body's end. Not safe for concurrent use, as no ResponseWriter is.
type unreadWriter struct {
	http.ResponseWriter
	body *eofBody
	done bool // began ran
}

func (w *unreadWriter) WriteHeader(code int) {
	w.began()
	w.ResponseWriter.WriteHeader(code)
}

func (w *unreadWriter) Write(p []byte) (int, error) {
	w.began()
	return w.ResponseWriter.Write(p)
}

// Unwrap exposes the wrapped writer to http.ResponseController (deadlines,
// Flush).
func (w *unreadWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// began runs once, as the answer begins: with the body unread, it asks for
// the connection's close and ends reads on it.
func (w *unreadWriter) began() {
	if w.done {
		return
	}
	w.done = true
	if w.body.eof {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w.ResponseWriter).SetReadDeadline(time.Now())
}
