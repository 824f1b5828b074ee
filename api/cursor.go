package api

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"

	"github.com/rankwire/rankwire/hub"
)

// CursorKeyLen is the size of Config.CursorKey: an AES-256 key.
const CursorKeyLen = 32

// cursorInfo labels the cursor key's derivation (DeriveCursorKey) and leads
// every cursor's additional data, so neither can be confused with another
// use of the same secret.
const cursorInfo = "rankwire cursor v1"

// errCursor is what opening a cursor that this gateway's key did not seal
// for this tenant and board-window returns; the caller names the parameter.
var errCursor = errors.New("api: not a cursor from a page's next")

// DeriveCursorKey returns the CursorKeyLen-byte cursor key derived from
// secret: HMAC-SHA256 keyed with secret over a label (the extract-and-expand
// of HKDF in one step, which is sound where secret is already uniformly
// random and at least 32 bytes, as the cluster secret and the data
// directory's cursor secret are). Every node given the same secret derives
// the same key, so a cursor one node wrote opens on any other.
func DeriveCursorKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(cursorInfo))
	return m.Sum(nil)
}

// cursorBox seals ledger cursors for clients and opens them again.
// AES-256-GCM with a random 96-bit nonce per cursor: a cursor's text is
// nonce‖ciphertext‖tag in URL-safe base64, so a client learns nothing of
// the sequence or member handle inside, and any change to it, or its use
// by another tenant or on another board-window, fails authentication.
// Random nonces are safe for far more than 2^32 cursors per key (NIST
// SP 800-38D's bound), and no cursor is ever stored. Safe for concurrent
// use (cipher.AEAD from crypto/aes is).
type cursorBox struct{ aead cipher.AEAD }

// newCursorBox returns a box keyed with key; nil or empty key means a
// random key of this process only (cursors then fail after a restart,
// answered with 400: a client reads again from the first page). It panics
// on a key of another length: a wiring mistake.
func newCursorBox(key []byte) *cursorBox {
	if len(key) == 0 {
		key = make([]byte, CursorKeyLen)
		rand.Read(key) // never fails (crypto/rand's contract since Go 1.24)
	}
	if len(key) != CursorKeyLen {
		panic("api: Config.CursorKey must be CursorKeyLen bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic("api: cursor key: " + err.Error())
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("api: cursor key: " + err.Error())
	}
	return &cursorBox{aead: aead}
}

// ad is the additional data binding a cursor to where it was issued: the
// tenant and the board-window it walks. The names are NUL-separated, and
// no validated name holds a NUL, so two places never share an ad.
func cursorAD(l hub.Loc) []byte {
	return []byte(cursorInfo + "\x00" + l.Tenant + "\x00" + l.Board + "\x00" + l.Window)
}

// seal returns c's text form for a client reading l.
func (b *cursorBox) seal(l hub.Loc, c hub.Cursor) string {
	plain, _ := c.MarshalBinary() // never fails
	out := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	rand.Read(out) // the nonce
	out = b.aead.Seal(out, out, plain, cursorAD(l))
	return base64.RawURLEncoding.EncodeToString(out)
}

// open reads a cursor that seal wrote for l; errCursor where s is not
// one (tampered, forged, another tenant's or another board-window's).
func (b *cursorBox) open(l hub.Loc, s string) (hub.Cursor, error) {
	var c hub.Cursor
	raw, err := base64.RawURLEncoding.DecodeString(s)
	n := b.aead.NonceSize()
	if err != nil || len(raw) < n+b.aead.Overhead() {
		return c, errCursor
	}
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], cursorAD(l))
	if err != nil || c.UnmarshalBinary(plain) != nil {
		return c, errCursor
	}
	return c, nil
}
