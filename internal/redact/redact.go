// Package redact cuts secrets out of URLs before they reach a log line, an
// error or a status page.
package redact

import (
	"errors"
	"net/url"
	"strings"
)

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

// URLs returns the comma-separated URLs in list (a NATS server list) without
// their user information. A URL that does not parse, or has no host, is
// replaced whole, since it may still hold a password.
func URLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.Host != "" {
			u.User = nil
			parts[i] = u.String()
		} else {
			parts[i] = "(a URL that does not parse)"
		}
	}
	return strings.Join(parts, ",")
}

// Err returns err without the *url.Error that http.Client wraps every error
// in: its message quotes the whole URL, path and query included.
func Err(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
