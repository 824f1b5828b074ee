// Package redact cuts secrets out of URLs before they reach a log line, an
// error or a status page.
package redact

import "net/url"

// Origin returns raw as scheme://host only, without its user, path, query or
// fragment: a webhook URL often carries a secret of the receiver's own there.
// What cannot be parsed, or has no host, is replaced whole.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
