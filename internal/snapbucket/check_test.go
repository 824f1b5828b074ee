package snapbucket

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"log/slog"
	"math"
	"testing"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/natstest"
)

// boardAt is a state at seq holding one board, b, and member as its one
// entry: two members give two states at one sequence.
func boardAt(t *testing.T, seq uint64, member string) *ledger.State {
	t.Helper()
	set, err := ledger.Settings{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	st := ledger.New()
	if out := st.Apply(seq-1, &ledger.Event{Kind: ledger.EvSettings, Board: "b", Settings: &set}); out.Err != nil {
		t.Fatal(out.Err)
	}
	ev := &ledger.Event{Kind: ledger.EvSubmit, Board: "b", Items: []ledger.Item{{Member: member, Score: 1}}}
	ev.Prepare()
	if out := st.Apply(seq, ev); out.Err != nil {
		t.Fatal(out.Err)
	}
	return st
}

// Load restores a shared snapshot only where the state it decodes to has
// the checkpoint the object names, and, for a loader that requires it,
// only where a majority agreed with that checkpoint: a wrong state named
// with the right checkpoint, a snapshot no majority agreed with, or one
// that names no checkpoint (written before the rule) is refused, and
// Newer then keeps the node's own, except on a clustered node (Vouched).
func TestLoadChecksTheSnapshot(t *testing.T) {
	good, wrong := boardAt(t, 9, "ann"), boardAt(t, 9, "cheat")
	forged := snapOf(t, wrong, true)
	forged.Sum = snapOf(t, good, true).Sum // the majority's checkpoint, another state's bytes
	for _, tc := range []struct {
		name   string
		snap   Snapshot
		agreed bool // the loader requires a majority's agreement
		want   bool
	}{
		{"agreed, as named", snapOf(t, good, true), true, true},
		{"not agreed, loader needs it", snapOf(t, good, false), true, false},
		{"not agreed, loader without the cluster's comparison", snapOf(t, good, false), false, true},
		{"another state under the majority's checkpoint", forged, true, false},
		{"another state, loader without the comparison", forged, false, false},
		{"names no checkpoint", Snapshot{Seq: 9, Agreed: true, Data: snapOf(t, good, true).Data}, true, false},
		{"names another sequence", Snapshot{Seq: 10, Sum: snapOf(t, good, true).Sum, Agreed: true, Data: snapOf(t, good, true).Data}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, js := natstest.JetStream(t)
			b, err := Open(t.Context(), js, nil, 1, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			b.Save("a", tc.snap)
			st, ok := b.Load(t.Context(), "a", 0, nil, tc.agreed)
			if ok != tc.want {
				t.Fatalf("loaded %v, want %v", ok, tc.want)
			}
			if ok && st.Seq() != 9 {
				t.Fatalf("loaded seq %d", st.Seq())
			}
			own := ledger.New()
			own.Skip(3)
			got, err := b.Newer(t.Context(), "a", own, nil, nil, tc.agreed)
			switch {
			case tc.want && (err != nil || got == own || got.Seq() != 9):
				t.Fatalf("Newer: %v, %v; want the shared snapshot", got, err)
			case !tc.want && !tc.agreed && (err != nil || got != own):
				t.Fatalf("Newer: %v, %v; want the node's own", got, err)
			case !tc.want && tc.agreed && !errors.Is(err, ErrUnvouched): // a clustered node: nothing vouches for its own
				t.Fatalf("Newer: %v, %v; want ErrUnvouched", got, err)
			}
		})
	}
}

// A clustered node opens from its own snapshot file only where the
// bucket's agreed checkpoint is that file's state; a file with one score
// changed so that it still decodes (its CRC made right), a file newer than
// the agreed checkpoint, and any file where the bucket holds no agreed
// checkpoint or is not open, are not opened from: the agreed shared
// snapshot where there is one, else the stream from its first event
// (ErrUnvouched). A file that could not be read stays the caller's error.
func TestVouchedOnlyByTheAgreedCheckpoint(t *testing.T) {
	good := boardAt(t, 9, "ann")
	flipped := flipScore(t, good)
	newer := boardAt(t, 12, "ann")
	unread := errors.New("unreadable")
	for _, tc := range []struct {
		name     string
		shared   *Snapshot // nil: the bucket holds none for the tenant
		noBucket bool
		local    *ledger.State
		localErr error
		want     string // "local", "shared", "unvouched", "local error", "empty"
	}{
		{"the agreed checkpoint is the file's", ptr(snapOf(t, good, true)), false, good, nil, "local"},
		{"a score flipped in the file", ptr(snapOf(t, good, true)), false, flipped, nil, "shared"},
		{"the file newer than the agreed checkpoint", ptr(snapOf(t, good, true)), false, newer, nil, "shared"},
		{"the checkpoint not agreed", ptr(snapOf(t, good, false)), false, good, nil, "unvouched"},
		{"nothing shared", nil, false, good, nil, "unvouched"},
		{"nothing shared, a score flipped", nil, false, flipped, nil, "unvouched"},
		{"no bucket open", nil, true, good, nil, "unvouched"},
		{"no file", nil, false, ledger.New(), nil, "empty"},
		{"the file unreadable", ptr(snapOf(t, good, false)), false, nil, unread, "local error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b *Bucket
			if !tc.noBucket {
				_, js := natstest.JetStream(t)
				var err error
				if b, err = Open(t.Context(), js, nil, 1, slog.New(slog.DiscardHandler)); err != nil {
					t.Fatal(err)
				}
				if tc.shared != nil {
					b.Save("a", *tc.shared)
				}
			}
			got, err := b.Newer(t.Context(), "a", tc.local, tc.localErr, nil, true)
			var ok bool
			switch tc.want {
			case "local":
				ok = err == nil && got == tc.local
			case "shared":
				ok = err == nil && got != tc.local && got.Seq() == 9 && sameState(t, got, good)
			case "unvouched":
				ok = errors.Is(err, ErrUnvouched) && got == nil
			case "local error":
				ok = errors.Is(err, unread)
			case "empty":
				ok = err == nil && got.Seq() == 0
			}
			if !ok {
				t.Fatalf("got %v (seq %d), %v; want %s", got, seqOf(got), err, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func seqOf(st *ledger.State) uint64 {
	if st == nil {
		return 0
	}
	return st.Seq()
}

// sameState reports whether a and b encode alike.
func sameState(t *testing.T, a, b *ledger.State) bool {
	t.Helper()
	return snapOf(t, a, false).Sum == snapOf(t, b, false).Sum
}

// flipScore returns st as its snapshot file would decode after one byte of
// a score (1, as boardAt puts it) changed and the CRC was made right again:
// another state at the same sequence that every check of the file itself
// passes.
func flipScore(t *testing.T, st *ledger.State) *ledger.State {
	t.Helper()
	data := snapOf(t, st, false).Data
	one := binary.LittleEndian.AppendUint64(nil, math.Float64bits(1))
	i := bytes.Index(data, one)
	if i < 0 {
		t.Fatal("no score 1 in the snapshot")
	}
	data[i+7] ^= 0x7f // 1 becomes 65,536: it still decodes
	body := data[:len(data)-4]
	binary.LittleEndian.PutUint32(data[len(body):], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	out, err := ledger.Decode(data, nil)
	if err != nil {
		t.Fatalf("the flipped snapshot does not decode: %v", err)
	}
	if sameState(t, out, st) {
		t.Fatal("the flip changed nothing")
	}
	return out
}
