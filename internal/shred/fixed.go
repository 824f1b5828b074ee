package shred

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Deterministic sealing, for snapshots. Every node writes the same
// snapshot bytes for the same events (their fingerprints compare them:
// internal/fingerprint), so a value sealed into a snapshot must not depend
// on a random nonce. sealFixed derives the nonce from the key and the
// value instead, as SIV does (RFC 5297's synthetic IV): nonce = the first
// 12 bytes of HMAC-SHA256(nonce key, associated data, plaintext), the
// nonce key an HMAC of the member's key under a label of its own. Equal
// values under one key seal alike (a snapshot reveals that a member's
// record did not change, nothing more); different values get different
// nonces unless HMAC collides on 96 bits, so a nonce is never reused with
// another plaintext. The format is Seal's, so Open opens both.

// nonceLabel keys the HMAC that derives a member's nonce key from its key.
const nonceLabel = "rankwire: snapshot nonce key"

// ErrDestroyed reports a member whose key was destroyed (erased) while
// the state still holds its personal data: the erasure is logged but not
// yet applied here, so no snapshot is taken until it is.
var ErrDestroyed = errors.New("shred: the member's key is destroyed")

// prepared is a cached key made ready for sealing snapshots: its cipher
// and its nonce key, made once per key rather than per seal. GCM's Seal and
// Open are safe for concurrent use.
type prepared struct {
	raw []byte
	g   cipher.AEAD
	nk  []byte // HMAC-SHA256(raw, nonceLabel)
}

func prepare(raw []byte) (*prepared, error) {
	g, err := aead(raw)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(nonceLabel))
	return &prepared{raw: raw, g: g, nk: m.Sum(nil)}, nil
}

// sealFixed encrypts plaintext under p like sealWith, with the nonce
// derived from p's key, tenant, owner and plaintext.
func sealFixed(p *prepared, tenant, owner string, plaintext []byte) ([]byte, error) {
	ad := associated(tenant, owner)
	return sealNonce(p.g, ad, plaintext, func(nonce []byte) error {
		m := hmac.New(sha256.New, p.nk)
		var n [binary.MaxVarintLen64]byte
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(ad)))])
		m.Write(ad)
		m.Write(plaintext)
		var sum [sha256.Size]byte
		copy(nonce, m.Sum(sum[:0]))
		return nil
	})
}

// ringTimeout bounds a snapshot's request for one key not cached.
const ringTimeout = 10 * time.Second

// ring is one tenant's members' keys as a snapshot's ledger.Keyring.
type ring struct {
	k      *Keys
	tenant string
}

// Ring returns tenant's members' keys as a ledger.Keyring: the keys with
// which snapshots seal the members' personal data (deterministically,
// above), and open it. A key this node caches costs no request; one it
// does not, one request (at most ringTimeout). Nil for a nil Keys (no
// keys: the snapshot is written in clear). Safe for concurrent use.
func (k *Keys) Ring(tenant string) ledger.Keyring {
	if k == nil {
		return nil
	}
	return ring{k, tenant}
}

// Seal seals plaintext under owner's key, deterministically; a member
// with none gets one, as with SealKept; an erased member's
// (a tombstone) gives ErrDestroyed.
func (r ring) Seal(owner string, plaintext []byte) ([]byte, error) {
	p := r.k.cached(r.tenant, owner)
	if p == nil {
		ctx, cancel := context.WithTimeout(context.Background(), ringTimeout)
		defer cancel()
		key, err := r.k.key(ctx, r.tenant, owner, sealKept, false)
		if err != nil {
			return nil, err
		}
		if key == nil {
			return nil, fmt.Errorf("%w: a member of tenant %s", ErrDestroyed, r.tenant)
		}
		if p, err = prepare(key); err != nil {
			return nil, err
		}
	}
	return sealFixed(p, r.tenant, owner, plaintext)
}

// Open opens a value Seal sealed (Keys.Open): false where owner's key is
// gone.
func (r ring) Open(owner string, sealed []byte) ([]byte, bool, error) {
	if p := r.k.cached(r.tenant, owner); p != nil {
		if pt, ok := openWith(p.g, r.tenant, owner, sealed); ok {
			return pt, true, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), ringTimeout)
	defer cancel()
	return r.k.Open(ctx, r.tenant, owner, sealed)
}

// cached returns owner's key, prepared, where this Keys caches it, else
// nil. The prepared key is remade where the cached one changed since.
func (k *Keys) cached(tenant, owner string) *prepared {
	name := entry(tenant, owner)
	k.mu.Lock()
	defer k.mu.Unlock()
	raw := k.cache[name]
	if raw == nil {
		return nil
	}
	if p := k.prep[name]; p != nil && bytes.Equal(p.raw, raw) {
		return p
	}
	p, err := prepare(raw)
	if err != nil {
		return nil
	}
	k.prep[name] = p
	return p
}
