package client

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"
)

// WithDefaultTransportTrusting is the default transport (its HTTP/2
// pings included) with roots as the only trusted CAs: for tests against
// an httptest TLS server.
func WithDefaultTransportTrusting(roots *x509.CertPool) Option {
	t := defaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: roots}
	return WithHTTPClient(&http.Client{Timeout: 30 * time.Second, Transport: t})
}

// PingingTransport is pingingTransport, for its test.
var PingingTransport = pingingTransport
