package shred

import (
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding"
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
// and its nonce key's HMAC, made once per key rather than per seal. GCM's
// Seal and Open are safe for concurrent use; the HMAC's states are only
// read (each seal starts a hash of its own from them).
type prepared struct {
	gen          uint64 // Keys.gen when made: stale once it moved on
	g            cipher.AEAD
	inner, outer [sha256.Size]byte // SHA-256's chaining values after the nonce key's ipad and opad blocks (RFC 2104)
}

// oneBlock is SHA-256's marshalled state after one block: a chaining value
// at bytes 4 to 36 (hChain), an empty buffer and a length of 64. A state
// after a pad block is this with its chaining value put in: 64 bytes kept
// per prepared key, not two 108-byte states.
var oneBlock = func() []byte {
	h := sha256.New()
	h.Write(make([]byte, sha256.BlockSize))
	b, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
	return b
}()

const hChain = 4 // where the chaining value sits in oneBlock

func prepare(raw []byte, gen uint64) (*prepared, error) {
	g, err := aead(raw)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(nonceLabel))
	nk := m.Sum(nil) // 32 bytes: shorter than SHA-256's block, so HMAC pads it with zeros
	p := &prepared{gen: gen, g: g}
	chains := [2]*[sha256.Size]byte{&p.inner, &p.outer}
	for i, pad := range []byte{0x36, 0x5c} {
		var block [sha256.BlockSize]byte
		copy(block[:], nk)
		for j := range block {
			block[j] ^= pad
		}
		h := sha256.New()
		h.Write(block[:])
		st, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil || len(st) != len(oneBlock) {
			return nil, fmt.Errorf("shred: SHA-256's state: %d bytes, %v", len(st), err)
		}
		copy(chains[i][:], st[hChain:])
	}
	return p, nil
}

// nonceOf is HMAC-SHA256(nonce key, uvarint len(ad) | ad | plaintext)'s
// first bytes, from p's precomputed states: one hash and no key schedule
// per seal, the bytes hmac.New would give (TestNonceOfIsHMAC).
func (p *prepared) nonceOf(nonce, ad, plaintext []byte) error {
	var st [128]byte
	state := func(chain *[sha256.Size]byte) []byte {
		b := append(st[:0], oneBlock...)
		copy(b[hChain:], chain[:])
		return b
	}
	h := sha256.New()
	u := h.(encoding.BinaryUnmarshaler)
	if err := u.UnmarshalBinary(state(&p.inner)); err != nil {
		return err
	}
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(ad)))])
	h.Write(ad)
	h.Write(plaintext)
	var sum [sha256.Size]byte
	in := h.Sum(sum[:0])
	if err := u.UnmarshalBinary(state(&p.outer)); err != nil {
		return err
	}
	h.Write(in)
	copy(nonce, h.Sum(sum[:0]))
	return nil
}

// sealFixed encrypts plaintext under p like sealWith, with the nonce
// derived from p's key, tenant, owner and plaintext.
func sealFixed(p *prepared, tenant, owner string, plaintext []byte) ([]byte, error) {
	ad := associated(tenant, owner)
	return sealNonce(p.g, ad, plaintext, func(nonce []byte) error { return p.nonceOf(nonce, ad, plaintext) })
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
		if p, err = prepare(key, 0); err != nil { // used once: stale or not
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
// nil. A prepared key is found by tenant and member, without hashing its
// entry name; it is remade where the cached key changed since (Forget
// drops it, remember's replacement makes it stale).
func (k *Keys) cached(tenant, owner string) *prepared {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p := k.prep[tenant][owner]; p != nil && p.gen == k.gen {
		return p
	}
	raw := k.cache[entry(tenant, owner)]
	if raw == nil {
		return nil
	}
	p, err := prepare(raw, k.gen)
	if err != nil {
		return nil
	}
	if k.prep[tenant] == nil {
		k.prep[tenant] = map[string]*prepared{}
	}
	k.prep[tenant][owner] = p
	return p
}
