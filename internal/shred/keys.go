package shred

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream is the JetStream stream of the members' keys: one message per
// key, on subject keySubject(entry), never more than one per subject.
const Stream = "rankwire_member_keys"

// keyLen is the length of a member's key: AES-256.
const keyLen = 32

// sealVersion is the first byte of every sealed value.
const sealVersion = 1

// ErrCorrupt reports a key message that is not a key.
var ErrCorrupt = errors.New("shred: corrupt key")

// Keys is the members' keys of every tenant, in the stream, cached.
type Keys struct {
	js       jetstream.JetStream
	replicas int

	mu    sync.Mutex
	s     jetstream.Stream                // nil until the stream is opened (stream)
	cache map[string][]byte               // entry name → key
	prep  map[string]map[string]*prepared // tenant → member → its cached key made ready for snapshots (fixed.go)
	gen   uint64                          // bumped where a cached key is replaced: older prepared keys are stale
}

// New returns the keys in js's stream Stream, which it creates with
// replicas copies (at least one) on first use: a gateway that never seals
// anything never needs it.
func New(js jetstream.JetStream, replicas int) *Keys {
	return &Keys{js: js, replicas: max(replicas, 1), cache: map[string][]byte{}, prep: map[string]map[string]*prepared{}}
}

// Open returns New(js, replicas) with its stream opened.
func Open(ctx context.Context, js jetstream.JetStream, replicas int) (*Keys, error) {
	k := New(js, replicas)
	_, err := k.stream(ctx)
	return k, err
}

// stream returns the keys' stream, creating or opening it where this
// Keys has not yet. It is a plain stream rather than a key-value bucket
// because a bucket forbids deleting a message, and a key must be
// overwritten on disk (secure delete), not only marked purged. Reads go
// to the stream's leader (no direct get): a node must see a key as soon as
// the node that created it published the event it sealed.
func (k *Keys) stream(ctx context.Context) (jetstream.Stream, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.s != nil {
		return k.s, nil
	}
	s, err := k.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              Stream,
		Description:       "rankwire: per-member keys of sealed personal data; erasure destroys a member's",
		Subjects:          []string{keyPrefix + ">"},
		MaxMsgsPerSubject: 1,
		Discard:           jetstream.DiscardNew,
		Storage:           jetstream.FileStorage,
		Replicas:          k.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("shred: stream %s: %w", Stream, err)
	}
	k.s = s
	return s, nil
}

// keyPrefix starts every key's subject.
const keyPrefix = "rankwire.keys."

// entry is the name of owner's key in tenant: a hash, so that no subject
// names a member.
func entry(tenant, owner string) string {
	sum := sha256.Sum256(associated(tenant, owner))
	return "k" + hex.EncodeToString(sum[:20])
}

// keyMode is what key does where a member has no key.
type keyMode int

const (
	lookup   keyMode = iota // none: nil
	seal                    // create one, also after an erasure (new personal data)
	sealKept                // create one unless the member was erased (a tombstone): nil
)

// key returns owner's key, or nil and no error where it has none and mode
// does not create one (see keyMode). A cached key is returned unless fresh
// is set: then the stream is asked.
func (k *Keys) key(ctx context.Context, tenant, owner string, mode keyMode, fresh bool) ([]byte, error) {
	name := entry(tenant, owner)
	k.mu.Lock()
	key, ok := k.cache[name]
	k.mu.Unlock()
	if ok && !fresh {
		return key, nil
	}
	s, err := k.stream(ctx)
	if err != nil {
		return nil, err
	}
	if mode != lookup && !ok {
		return k.create(ctx, s, name, mode, 0) // one request where the member has none (most seals of a new member)
	}
	m, err := s.GetLastMsgForSubject(ctx, keyPrefix+name)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound) && mode != lookup:
		return k.create(ctx, s, name, mode, 0)
	case errors.Is(err, jetstream.ErrMsgNotFound):
		k.Forget(tenant, owner)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("shred: get key: %w", err)
	case len(m.Data) == 0: // a tombstone: erased
		k.Forget(tenant, owner)
		if mode == seal {
			return k.create(ctx, s, name, mode, m.Sequence)
		}
		return nil, nil
	case len(m.Data) != keyLen:
		return nil, ErrCorrupt
	}
	return k.remember(name, m.Data), nil
}

// create makes a new key under name where the subject's last message is
// at sequence last (0: none; else a tombstone), or takes the one another
// node made first. Where it finds a tombstone instead it returns nil in
// mode sealKept, and in mode seal replaces it (once).
func (k *Keys) create(ctx context.Context, s jetstream.Stream, name string, mode keyMode, last uint64) ([]byte, error) {
	key := make([]byte, keyLen)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	_, err := k.js.Publish(ctx, keyPrefix+name, key, jetstream.WithExpectLastSequencePerSubject(last))
	if err == nil {
		return k.remember(name, key), nil
	}
	m, gerr := s.GetLastMsgForSubject(ctx, keyPrefix+name)
	switch {
	case gerr == nil && len(m.Data) == keyLen:
		return k.remember(name, m.Data), nil
	case gerr == nil && len(m.Data) == 0 && mode == sealKept:
		return nil, nil
	case gerr == nil && len(m.Data) == 0 && last == 0:
		return k.create(ctx, s, name, mode, m.Sequence) // erased before: replace the tombstone (once)
	}
	return nil, fmt.Errorf("shred: create key: %w", err)
}

func (k *Keys) remember(name string, key []byte) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	if old, ok := k.cache[name]; ok && string(old) != string(key) {
		k.gen++ // the member's prepared key, wherever it is, is stale (fixed.go)
	}
	k.cache[name] = key
	return key
}

// aead returns the cipher of key.
func aead(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// Seal encrypts plaintext under owner's key in tenant, creating the key
// where it has none: one request to the stream for a member this node has
// no key of, none where it has (see the package doc for the one race this
// leaves).
func (k *Keys) Seal(ctx context.Context, tenant, owner string, plaintext []byte) ([]byte, error) {
	key, err := k.key(ctx, tenant, owner, seal, false)
	if err != nil {
		return nil, err
	}
	return sealWith(key, tenant, owner, plaintext)
}

// SealKept is Seal for a copy of personal data the member gave before (a
// name in a notification): false, and nothing sealed, where the member was
// erased since (its key destroyed: a new key would make the copy readable
// again). A member that never had a key gets one, as with Seal.
func (k *Keys) SealKept(ctx context.Context, tenant, owner string, plaintext []byte) ([]byte, bool, error) {
	key, err := k.key(ctx, tenant, owner, sealKept, false)
	if err != nil || key == nil {
		return nil, false, err
	}
	ct, err := sealWith(key, tenant, owner, plaintext)
	return ct, err == nil, err
}

// sealWith encrypts plaintext under key, tenant and owner as associated
// data, with a random nonce.
func sealWith(key []byte, tenant, owner string, plaintext []byte) ([]byte, error) {
	g, err := aead(key)
	if err != nil {
		return nil, err
	}
	return sealNonce(g, associated(tenant, owner), plaintext, func(nonce []byte) error {
		_, err := rand.Read(nonce)
		return err
	})
}

// associated is the associated data of owner's values in tenant.
func associated(tenant, owner string) []byte { return []byte(tenant + "\x00" + owner) }

// sealNonce encrypts plaintext with g like sealWith, ad the associated
// data, with the nonce that nonce writes.
func sealNonce(g cipher.AEAD, ad, plaintext []byte, nonce func([]byte) error) ([]byte, error) {
	out := make([]byte, 1+g.NonceSize(), 1+g.NonceSize()+len(plaintext)+g.Overhead())
	out[0] = sealVersion
	if err := nonce(out[1:]); err != nil {
		return nil, err
	}
	return g.Seal(out, out[1:], plaintext, ad), nil
}

// Open decrypts a value Seal returned: the plaintext and true, or false
// where owner's key is gone or the value is not one it sealed (erased, for
// the caller); an error only where the stream cannot be read now (the
// caller tries again: deciding "erased" on a passing failure would make
// this node differ from the others).
//
// A value that the cached key does not open is tried once more with the
// stream's key: the cache may hold a key destroyed and made anew since.
func (k *Keys) Open(ctx context.Context, tenant, owner string, sealed []byte) ([]byte, bool, error) {
	for _, fresh := range []bool{false, true} {
		key, err := k.key(ctx, tenant, owner, lookup, fresh)
		if err != nil || key == nil {
			return nil, false, err
		}
		if pt, ok := open(key, tenant, owner, sealed); ok {
			return pt, true, nil
		}
	}
	return nil, false, nil
}

// open decrypts sealed with key, or reports false.
func open(key []byte, tenant, owner string, sealed []byte) ([]byte, bool) {
	g, err := aead(key)
	if err != nil {
		return nil, false
	}
	return openWith(g, tenant, owner, sealed)
}

// openWith decrypts sealed with g, or reports false.
func openWith(g cipher.AEAD, tenant, owner string, sealed []byte) ([]byte, bool) {
	if len(sealed) < 1+g.NonceSize() || sealed[0] != sealVersion {
		return nil, false
	}
	pt, err := g.Open(nil, sealed[1:1+g.NonceSize()], sealed[1+g.NonceSize():], associated(tenant, owner))
	return pt, err == nil
}

// Forget drops owners' keys in tenant from this node's cache.
func (k *Keys) Forget(tenant string, owners ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, o := range owners {
		delete(k.cache, entry(tenant, o))
		delete(k.prep[tenant], o)
	}
}

// Destroy erases owners' keys in tenant: each key's message is
// overwritten on every replica (secure delete), then forgotten here, and
// a tombstone (an empty message) takes its subject, so that a copy of the
// member's data sealed later (SealKept) gets no new key; a profile put
// later (Seal) replaces it. A member without a key is no error: it gets
// its tombstone all the same.
func (k *Keys) Destroy(ctx context.Context, tenant string, owners ...string) error {
	s, err := k.stream(ctx)
	if err != nil {
		return err
	}
	for _, o := range owners {
		subject := keyPrefix + entry(tenant, o)
		m, err := s.GetLastMsgForSubject(ctx, subject)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return fmt.Errorf("shred: get key: %w", err)
		case len(m.Data) == 0:
			continue // erased before
		default:
			if err := s.SecureDeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
				return fmt.Errorf("shred: destroy key: %w", err)
			}
		}
		if err := k.tombstone(ctx, s, subject); err != nil {
			return err
		}
	}
	k.Forget(tenant, owners...)
	return nil
}

// tombstone marks subject's member as erased, unless a key was made there
// since the key was destroyed (a profile put meanwhile: that key stays).
func (k *Keys) tombstone(ctx context.Context, s jetstream.Stream, subject string) error {
	_, err := k.js.Publish(ctx, subject, nil, jetstream.WithExpectLastSequencePerSubject(0))
	if err == nil {
		return nil
	}
	if _, gerr := s.GetLastMsgForSubject(ctx, subject); gerr == nil {
		return nil // a tombstone or a new key: another node's
	}
	return fmt.Errorf("shred: mark erased: %w", err)
}
