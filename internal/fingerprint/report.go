package fingerprint

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Report is one node's checkpoint for one tenant, as nodes publish it to
// each other.
type Report struct {
	Node   string // the publishing node's name, unique in the cluster
	Tenant string
	Checkpoint
}

// Limits of a Report's names, so a report's size is bounded.
const (
	maxName       = 255
	reportVersion = 1
)

// ErrReport is wrapped by every error of ParseReport.
var ErrReport = errors.New("fingerprint: malformed report")

// Marshal encodes r: a version byte, Seq (8 bytes, big-endian), Sum, then
// Node and Tenant each as a length byte and its bytes. Names longer than
// 255 bytes are a programmer error (node and tenant names are validated
// far shorter) and are cut, so the report then fails to match.
func (r Report) Marshal() []byte {
	node, tenant := cut(r.Node), cut(r.Tenant)
	b := make([]byte, 0, 1+8+len(r.Sum)+2+len(node)+len(tenant))
	b = append(b, reportVersion)
	b = binary.BigEndian.AppendUint64(b, r.Seq)
	b = append(b, r.Sum[:]...)
	b = append(b, byte(len(node)))
	b = append(b, node...)
	b = append(b, byte(len(tenant)))
	return append(b, tenant...)
}

func cut(s string) string { return s[:min(len(s), maxName)] }

// ParseReport decodes what Marshal encoded. It never panics on input; an
// error wraps ErrReport and names what is wrong.
func ParseReport(b []byte) (Report, error) {
	var r Report
	if len(b) < 1+8+len(r.Sum) || b[0] != reportVersion {
		return r, fmt.Errorf("%w: short or unknown version", ErrReport)
	}
	b = b[1:]
	r.Seq = binary.BigEndian.Uint64(b)
	b = b[8:]
	b = b[copy(r.Sum[:], b):]
	var err error
	if r.Node, b, err = name(b); err != nil {
		return r, fmt.Errorf("%w: node: %v", ErrReport, err)
	}
	if r.Tenant, b, err = name(b); err != nil {
		return r, fmt.Errorf("%w: tenant: %v", ErrReport, err)
	}
	if len(b) != 0 || r.Node == "" || r.Tenant == "" || r.Seq == 0 {
		return r, fmt.Errorf("%w: empty name, zero seq or trailing bytes", ErrReport)
	}
	return r, nil
}

// name reads one length-prefixed name off b.
func name(b []byte) (string, []byte, error) {
	if len(b) < 1 || len(b) < 1+int(b[0]) {
		return "", nil, errors.New("truncated")
	}
	n := int(b[0])
	return string(b[1 : 1+n]), b[1+n:], nil
}
