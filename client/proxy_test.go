package client_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rankwire/rankwire/internal/natstest"
)

// startNATS starts a nats-server with JetStream on a random loopback port
// that several gateways share: a cluster in one process.
func startNATS(t *testing.T) string {
	t.Helper()
	return natstest.Server(t).ClientURL()
}

// Directions a tcpProxy forwards, each of which it can hold.
const (
	up   = 0 // client to gateway
	down = 1 // gateway to client
)

// tcpProxy is a real listener in front of a gateway that forwards bytes
// both ways until told to hold a direction: then it keeps accepting and
// reading but passes nothing on, as a paused process or a partition does.
type tcpProxy struct {
	ln       net.Listener
	target   string
	accepted atomic.Int64
	mu       sync.Mutex       // guards the fields below
	flowing  [2]chan struct{} // closed while the direction forwards
	conns    []net.Conn
	closed   bool
	wg       sync.WaitGroup
}

func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	for d := range p.flowing {
		p.flowing[d] = make(chan struct{})
		close(p.flowing[d])
	}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) URL() string { return "http://" + p.ln.Addr().String() }

// hold stops forwarding in direction d (up or down).
func (p *tcpProxy) hold(d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flowing[d] = make(chan struct{})
}

// gate returns the channel that is closed while direction d forwards.
func (p *tcpProxy) gate(d int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flowing[d]
}

func (p *tcpProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		g, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, g) {
			return
		}
		p.wg.Go(func() { p.pipe(c, g, up) })
		p.wg.Go(func() { p.pipe(g, c, down) })
	}
}

// track records the connections for close; false once closed.
func (p *tcpProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	p.conns = append(p.conns, cs...)
	return true
}

// pipe copies from src to dst, each chunk waiting for direction d to flow.
func (p *tcpProxy) pipe(src, dst net.Conn, d int) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate(d) // a held direction blocks here until close ends the conns
			if p.isClosed() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *tcpProxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// close ends the listener and every connection, and waits for the pipes.
func (p *tcpProxy) close() {
	p.mu.Lock()
	p.closed = true
	for d := range p.flowing {
		select {
		case <-p.flowing[d]:
		default:
			close(p.flowing[d]) // release the held pipes: they see closed
		}
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// front is an HTTP proxy in front of a gateway that counts requests and
// lets a test answer in place of the gateway.
type front struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex // guards the fields below
	// forward says whether the n-th request goes to the gateway; nil: all.
	forward func(n int64) bool
	// answer, where it returns true, has answered the n-th request in
	// place of the gateway (after forwarding it where forward said so).
	answer func(w http.ResponseWriter, n int64) bool
}

// set replaces the front's behaviour.
func (f *front) set(forward func(n int64) bool, answer func(w http.ResponseWriter, n int64) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forward, f.answer = forward, answer
}

func (f *front) get() (func(int64) bool, func(http.ResponseWriter, int64) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forward, f.answer
}

func startFront(t *testing.T, target string) *front {
	f := &front{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.requests.Add(1)
		fwd, answer := f.get()
		var resp *http.Response
		if fwd == nil || fwd(n) {
			var err error
			if resp, err = forward(r, target); err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
		}
		if answer != nil && answer(w, n) {
			return
		}
		if resp == nil {
			http.Error(w, "not forwarded", http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(f.Close)
	return f
}

// never forwards no request.
func never(int64) bool { return false }

// forward sends r on to the gateway at target (host:port).
func forward(r *http.Request, target string) (*http.Response, error) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+target+r.URL.RequestURI(), r.Body)
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		return nil, errors.Join(errors.New("front"), err)
	}
	return resp, nil
}

// unavailable answers as a gateway that cannot reach its log.
func unavailable(w http.ResponseWriter, _ int64) bool {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `{"error":{"code":"unavailable","message":"tenant: the log does not answer"}}`)
	return true
}
