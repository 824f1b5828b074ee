package snapbucket

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
)

// What a shared snapshot must prove before a node serves it. A node's copy
// of a tenant can be wrong while every checksum passes (a snapshot file
// that decodes but holds a change the stream never had: docs/CLUSTERING.md,
// "A node whose copy diverged"); whatever that node shares, every node
// that starts from it would serve. So every object names the checkpoint
// of the state it holds (internal/fingerprint: the SHA-256 of its snapshot
// encoding in clear, at its sequence) and whether a majority of the
// cluster published that very checkpoint; Load decodes the object, hashes
// the state it got and refuses it where the hash is not the one named, or,
// for a clustered node, where no majority agreed. An object written before
// this rule (no checkpoint named) is refused too: one longer replay.

// Metadata keys of a shared snapshot's object.
const (
	metaSeq    = "seq"    // the stream sequence it was taken at
	metaSum    = "sum"    // its checkpoint's hash, hex
	metaAgreed = "agreed" // agreedMajority where a majority published that checkpoint
)

// agreedMajority is metaAgreed's value for a snapshot a majority agreed with.
const agreedMajority = "majority"

// Errors of Load's check, wrapped with the object's names.
var (
	// ErrUnagreed: the object's checkpoint was not confirmed by a majority
	// of the cluster, and the loader requires it.
	ErrUnagreed = errors.New("snapbucket: the shared snapshot was not confirmed by a majority of the cluster")
	// ErrMismatch: the state the object decodes to is not the one its
	// checkpoint names (or it names none).
	ErrMismatch = errors.New("snapbucket: the shared snapshot is not the state its checkpoint names")
)

// Snapshot is one tenant's snapshot as shared.
type Snapshot struct {
	Seq    uint64
	Sum    fingerprint.Sum // the checkpoint of its encoding in clear at Seq (fingerprint.Of)
	Agreed bool            // a majority of the cluster published Sum at Seq
	Data   []byte          // the snapshot, its personal data sealed
}

// metadata returns the object metadata that names snap.
func (snap Snapshot) metadata() map[string]string {
	m := map[string]string{metaSeq: strconv.FormatUint(snap.Seq, 10), metaSum: hex.EncodeToString(snap.Sum[:])}
	if snap.Agreed {
		m[metaAgreed] = agreedMajority
	}
	return m
}

// object is a shared snapshot as read, with the metadata stored with it.
type object struct {
	seq  uint64
	meta map[string]string
	data []byte // nil: none newer than asked
}

// read returns tenant's object where the info its bucket answered for it
// (GetInfo, asked by the caller: Vouched has asked already) says it is
// newer than seq, so that a node with a newer snapshot downloads nothing.
// The data and the metadata it returns are one object's (nats.go checks
// the chunks against the info's digest, and Get looks at the info again:
// the object may have been replaced since the caller's look).
func (s *Bucket) read(ctx context.Context, tenant string, info *jetstream.ObjectInfo, seq uint64) (object, error) {
	if shared, err := strconv.ParseUint(info.Metadata[metaSeq], 10, 64); err != nil || shared <= seq {
		return object{}, nil
	}
	res, err := s.store.Get(ctx, tenant)
	if err != nil {
		return object{}, err
	}
	defer res.Close()
	if info, err = res.Info(); err != nil {
		return object{}, err
	}
	data, err := io.ReadAll(res)
	if err != nil {
		return object{}, err
	}
	obj := object{meta: info.Metadata, data: data}
	obj.seq, _ = strconv.ParseUint(info.Metadata[metaSeq], 10, 64)
	return obj, nil
}

// check returns nil where st, the state obj decoded to, is the state obj
// names: at its sequence, with its checkpoint, and agreed by a majority
// where agreed is set. O(state): one encoding of st.
func (obj object) check(st *ledger.State, agreed bool) error {
	if agreed && obj.meta[metaAgreed] != agreedMajority {
		return ErrUnagreed
	}
	var want fingerprint.Sum
	sum, err := hex.DecodeString(obj.meta[metaSum])
	if err != nil || len(sum) != len(want) {
		return fmt.Errorf("%w: it names no checkpoint", ErrMismatch)
	}
	copy(want[:], sum)
	if st.Seq() != obj.seq {
		return fmt.Errorf("%w: it is at seq %d, its name says %d", ErrMismatch, st.Seq(), obj.seq)
	}
	p, err := st.Prepare()
	if err != nil {
		return err
	}
	if fingerprint.Of(st.Seq(), p.Clear()).Sum != want {
		return fmt.Errorf("%w: its state hashes otherwise at seq %d", ErrMismatch, st.Seq())
	}
	return nil
}
