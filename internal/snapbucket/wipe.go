package snapbucket

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/shred"
)

// Why not ObjectStore.Put: it purges the replaced object's chunks, and a
// purge only marks them deleted: their bytes (profiles in clear) stay in
// the bucket's block files on every node, where a later erasure cannot
// reach them (docs/SECURITY.md). So Save writes the object itself, in the
// layout nats.go reads (chunks on $O.<bucket>.C.<nuid>, then the info on
// $O.<bucket>.M.<base64 name> with a subject rollup), and overwrites the
// replaced object's chunks (internal/shred.Wipe: secure delete). Nothing
// in this package ever purges a chunk.

// Stream is the JetStream stream behind the bucket (nats.go names an
// object store's stream OBJ_<bucket>): callers that act on the stream
// itself (raftcompact, backups) name it through this, not a copy.
const Stream = "OBJ_" + Name

// stream is Stream, this package's name for it.
const stream = Stream

// chunkSize is the size of one chunk (nats.go's default).
const chunkSize = 128 << 10

// metaSubject is the subject of tenant's object info.
func metaSubject(tenant string) string {
	return "$O." + Name + ".M." + base64.URLEncoding.EncodeToString([]byte(tenant))
}

// chunkSubject is the subject of the chunks of the object with nuid.
func chunkSubject(nuid string) string { return "$O." + Name + ".C." + nuid }

// current is the object a save would replace.
type current struct {
	metaSeq uint64                // stream sequence of its info message; 0: no object
	info    *jetstream.ObjectInfo // nil: no object
}

// holdsFrom reports whether the object is a snapshot at seq or later.
func (c current) holdsFrom(seq uint64) bool {
	if c.info == nil || c.info.Deleted {
		return false
	}
	shared, err := strconv.ParseUint(c.info.Metadata["seq"], 10, 64)
	return err == nil && shared >= seq
}

// current reads tenant's object info and the sequence of its message.
func (b *Bucket) current(ctx context.Context, tenant string) (current, error) {
	m, err := gated(b, func() (*jetstream.RawStreamMsg, error) {
		return b.stream.GetLastMsgForSubject(ctx, metaSubject(tenant))
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return current{}, nil
	}
	if err != nil {
		return current{}, err
	}
	var info jetstream.ObjectInfo
	if err := json.Unmarshal(m.Data, &info); err != nil {
		return current{}, fmt.Errorf("object info of %q at %d: %w", tenant, m.Sequence, err)
	}
	return current{metaSeq: m.Sequence, info: &info}, nil
}

// put stores snap, tenant's snapshot, in place of cur: its chunks
// under a new nuid, then its info, published only where cur's info is
// still the last one (compare and set: a node never replaces, hence never
// wipes, an object it has not read). On any failure, a lost race
// included, it wipes the chunks it wrote and returns the error.
func (b *Bucket) put(ctx context.Context, tenant string, snap Snapshot, cur current) error {
	data := snap.Data
	info := jetstream.ObjectInfo{
		ObjectMeta: jetstream.ObjectMeta{
			Name:     tenant,
			Metadata: snap.metadata(),
			Opts:     &jetstream.ObjectMetaOptions{ChunkSize: chunkSize},
		},
		Bucket: Name,
		NUID:   rand.Text(),
		Size:   uint64(len(data)),
	}
	err := b.publishChunks(ctx, chunkSubject(info.NUID), data, &info)
	if err == nil {
		m := nats.NewMsg(metaSubject(tenant))
		m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
		if m.Data, err = json.Marshal(info); err == nil {
			_, err = gated(b, func() (*jetstream.PubAck, error) {
				return b.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(cur.metaSeq))
			})
		}
	}
	if err != nil {
		b.wipe(tenant, info.NUID, info.Chunks)
	}
	return err
}

// Withdraw removes tenant's shared snapshot where it is older than seq,
// an erasure's sequence: its info replaced by a deleted marker (compare and
// set, as put: another node's newer object or withdrawal stands), then its
// chunks overwritten (secure delete). A clustered node, which shares no
// snapshot at an erasure (agree.go), withdraws the older one instead, so
// that the erased members' sealed data does not wait in the bucket for the
// next agreed checkpoint; nodes start from their files or the stream
// meanwhile. Bounded as Save is; a failure is logged.
func (b *Bucket) Withdraw(tenant string, seq uint64) {
	ictx, icancel := context.WithTimeout(context.Background(), infoTimeout)
	cur, err := b.current(ictx, tenant)
	icancel()
	if err != nil || cur.info == nil || cur.info.Deleted || cur.holdsFrom(seq) {
		if err != nil {
			b.log.Warn("hub: shared snapshot not withdrawn after an erasure", "tenant", tenant, "seq", seq, "err", err)
		}
		return
	}
	info := jetstream.ObjectInfo{ObjectMeta: jetstream.ObjectMeta{Name: tenant}, Bucket: Name, NUID: rand.Text(), Deleted: true}
	m := nats.NewMsg(metaSubject(tenant))
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	if m.Data, err = json.Marshal(info); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), putTimeout(0))
		_, err = gated(b, func() (*jetstream.PubAck, error) {
			return b.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(cur.metaSeq))
		})
		cancel()
	}
	if err != nil {
		if !lostRace(err) { // a lost race: another node replaced or withdrew it, and wiped it
			b.log.Warn("hub: shared snapshot not withdrawn after an erasure", "tenant", tenant, "seq", seq, "err", err)
		}
		return
	}
	b.log.Info("hub: shared snapshot withdrawn after an erasure: the next agreed checkpoint replaces it", "tenant", tenant, "seq", seq)
	b.wipe(tenant, cur.info.NUID, cur.info.Chunks)
}

// publishChunks publishes data in chunks on subject, setting info's
// chunk count and digest.
func (b *Bucket) publishChunks(ctx context.Context, subject string, data []byte, info *jetstream.ObjectInfo) error {
	h := sha256.New()
	for off := 0; off < len(data); off += chunkSize {
		chunk := data[off:min(off+chunkSize, len(data))]
		h.Write(chunk)
		if _, err := gated(b, func() (*jetstream.PubAck, error) { return b.js.Publish(ctx, subject, chunk) }); err != nil {
			return err
		}
		info.Chunks++
	}
	info.Digest = jetstream.GetObjectDigestValue(h)
	return nil
}

// wipeTimeout bounds the wipe of n chunks: 2 s plus 250 ms a chunk (each
// about 5 to 10 ms on a loaded 2-core machine), at most Timeout, so that a
// cluster stopping whole, its quorum gone, does not hold each node's stop
// for long (see putTimeout).
func wipeTimeout(n uint32) time.Duration {
	return min(Timeout, 2*time.Second+time.Duration(n)*time.Second/4)
}

// wipe overwrites the n chunks of tenant's object with nuid (secure
// delete), bounded by wipeTimeout: one request per chunk to read it, one
// to overwrite it, and one more read. A failure is logged (the chunks'
// bytes then stay on disk until JetStream rewrites their block).
func (b *Bucket) wipe(tenant, nuid string, n uint32) {
	ctx, cancel := context.WithTimeout(context.Background(), wipeTimeout(n))
	defer cancel()
	start, wiped := time.Now(), 0
	err := b.gate(func() error {
		var err error
		wiped, err = shred.Wipe(ctx, b.js, stream, chunkSubject(nuid))
		return err
	})
	if err != nil {
		b.log.Warn("hub: replaced shared snapshot not wiped", "tenant", tenant, "nuid", nuid, "err", err)
		return
	}
	b.log.Debug("hub: replaced shared snapshot wiped", "tenant", tenant, "chunks", wiped, "took", time.Since(start))
}

// lostRace reports whether err is put's compare and set failing: another
// node's object info came after the one this node read.
func lostRace(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
