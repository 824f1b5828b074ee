package webhook

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/rankwire/rankwire/internal/redact"
)

// Reasons a destination is refused, the values of RefusedError.Reason and
// the keys of Stats.Refused.
const (
	ReasonLoopback    = "loopback"    // 127.0.0.0/8, ::1
	ReasonLinkLocal   = "link_local"  // 169.254.0.0/16 (cloud metadata), fe80::/10
	ReasonPrivate     = "private"     // 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7
	ReasonUnspecified = "unspecified" // 0.0.0.0/8, ::
	ReasonMulticast   = "multicast"   // 224.0.0.0/4, ff00::/8
	ReasonReserved    = "reserved"    // 240.0.0.0/4 and the broadcast address
	ReasonSelf        = "self"        // one of the gateway's own listeners
)

// Reasons lists every reason, for metrics.
var Reasons = [...]string{ReasonLoopback, ReasonLinkLocal, ReasonPrivate, ReasonUnspecified, ReasonMulticast, ReasonReserved, ReasonSelf}

var (
	cgnat    = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT; Alibaba's metadata service is 100.100.100.200
	thisNet  = netip.MustParsePrefix("0.0.0.0/8")
	reserved = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
)

// RefusedError is a webhook destination the policy refused: the address
// was resolved but never connected to.
type RefusedError struct {
	Addr   netip.AddrPort // the resolved address
	Reason string         // one of the Reason constants
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("webhook: destination %s refused (%s; see --webhook-allow)", e.Addr, e.Reason)
}

// policy decides which resolved addresses a webhook may connect to. It is
// read only after construction, so safe for concurrent use.
type policy struct {
	allow []netip.Prefix
	self  []netip.AddrPort // the gateway's listeners; an unspecified IP means every local address
}

// newPolicy builds the policy of cfg. Entries of self that are not IP:port
// are ignored (a listener that is off).
func newPolicy(allow []netip.Prefix, self []string) *policy {
	p := &policy{allow: allow}
	for _, s := range self {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			p.self = append(p.self, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
		}
	}
	return p
}

// check returns nil where ap may be dialled, else a *RefusedError. An
// allowed prefix lifts every reason but self, which only an allowed single
// address (a /32 or /128) lifts: allowing 127.0.0.0/8 for a receiver beside
// the gateway does not open the gateway's own port.
func (p *policy) check(ap netip.AddrPort) error {
	// Unmapped, so that ::ffff:127.0.0.1 is loopback; unzoned, since a
	// prefix contains no zoned address (fe80::1%eth0).
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	ip := ap.Addr()
	if p.isSelf(ap) {
		for _, a := range p.allow {
			if a.IsSingleIP() && a.Contains(ip) {
				return nil
			}
		}
		return &RefusedError{Addr: ap, Reason: ReasonSelf}
	}
	reason := classify(ip)
	if reason == "" {
		return nil
	}
	for _, a := range p.allow {
		if a.Contains(ip) {
			return nil
		}
	}
	return &RefusedError{Addr: ap, Reason: reason}
}

// classify returns why ip is refused by default, or "" where it is public.
func classify(ip netip.Addr) string {
	switch {
	case ip.IsLoopback():
		return ReasonLoopback
	case ip.IsMulticast():
		return ReasonMulticast
	case ip.IsLinkLocalUnicast():
		return ReasonLinkLocal
	case ip.IsPrivate() || cgnat.Contains(ip):
		return ReasonPrivate
	case ip.IsUnspecified() || thisNet.Contains(ip):
		return ReasonUnspecified
	case reserved.Contains(ip):
		return ReasonReserved
	}
	return ""
}

// isSelf reports whether ap is one of the gateway's listeners. A listener
// on an unspecified IP answers on every local address: those are read from
// the interfaces at each check, as they may change.
func (p *policy) isSelf(ap netip.AddrPort) bool {
	for _, s := range p.self {
		if s.Port() != ap.Port() {
			continue
		}
		if s.Addr() == ap.Addr() || (s.Addr().IsUnspecified() && isLocal(ap.Addr())) {
			return true
		}
	}
	return false
}

// isLocal reports whether ip is an address of one of this machine's interfaces.
func isLocal(ip netip.Addr) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if local, ok := netip.AddrFromSlice(n.IP); ok && local.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// control is a net.Dialer's Control: it runs on the resolved address of
// every connection attempt, after the DNS answer and before connect, so a
// name that resolves differently at dial time (DNS rebinding) is still
// checked on the address actually used.
func (p *policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: destination %q: %w", address, err)
	}
	return p.check(ap)
}

// newClient returns the webhook HTTP client: every connection checked by
// p, no proxy (a proxy would be the address checked, not the receiver), no
// redirect followed (a redirect is an answer that is not 2xx).
func newClient(p *policy, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: p.control}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        100,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: timeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// ParseAllow parses --webhook-allow: comma-separated CIDR prefixes (or
// single IPs), e.g. "127.0.0.0/8,10.0.0.0/8".
func ParseAllow(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			ip, ipErr := netip.ParseAddr(s)
			if ipErr != nil {
				return nil, fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8", s)
			}
			p = netip.PrefixFrom(ip, ip.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Redact returns raw without its path, query, fragment or user: webhook
// URLs often carry their own secret there. What cannot be parsed is
// replaced whole.
func Redact(raw string) string { return redact.Origin(raw) }
