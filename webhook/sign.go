package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com): a
// receiver's library checks the signature over id, timestamp and body, and
// refuses a timestamp too far from its clock, so that a captured request
// cannot be replayed later.
const (
	HeaderID        = "webhook-id"        // the notification's id: the same on every attempt
	HeaderTimestamp = "webhook-timestamp" // the attempt's time, in Unix seconds
	HeaderSignature = "webhook-signature" // "v1,<base64 HMAC-SHA256 of id.timestamp.body>"
	// HeaderLegacySignature is the signature of earlier releases, of the
	// body alone (see Sign). Deprecated: it carries no timestamp, so a
	// receiver cannot refuse a replay; it is sent for one more release.
	HeaderLegacySignature = "X-Rankwire-Signature"
)

// secretPrefix marks a secret written the Standard Webhooks way: the key is
// the base64 after it.
const secretPrefix = "whsec_"

// ErrSecret is a whsec_ secret whose rest is not base64: nothing is signed
// (or sent) with it.
var ErrSecret = errors.New("webhook: a secret starting whsec_ must continue in base64")

// SigningKey returns the HMAC key of secret: the base64-decoded rest of a
// secret that starts "whsec_", as the Standard Webhooks libraries read it;
// otherwise the secret's bytes as written, the key earlier releases used
// (a receiver's library takes that secret as "whsec_" + base64(secret)).
func SigningKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return nil, ErrSecret
	}
	return key, nil
}

// SignV1 returns the webhook-signature value of one attempt: "v1," and the
// base64 HMAC-SHA256, keyed with key, of id "." unix seconds "." body.
func SignV1(key []byte, id string, at time.Time, body []byte) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.", id, at.Unix())
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// signRequest sets the signature headers of one attempt at time at: the
// Standard Webhooks three and the deprecated legacy one.
func signRequest(h http.Header, secret, id string, at time.Time, body []byte) error {
	key, err := SigningKey(secret)
	if err != nil {
		return err
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, SignV1(key, id, at, body))
	h.Set(HeaderLegacySignature, Sign(secret, body))
	return nil
}

// Sign returns the legacy signature header's value for body: "sha256=" and
// the hex HMAC-SHA256 of body keyed with secret's bytes. Deprecated: see
// HeaderLegacySignature; receivers should check webhook-signature.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
