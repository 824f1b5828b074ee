package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/internal/notify"
	"github.com/rankwire/rankwire/internal/shred"
)

// `gateway restore` turns a backup (backup.go) into streams again: it
// checks every file against SHA256SUMS and the manifest and every stream
// file's framing first, and refuses the whole backup on the first
// difference (naming the file and the offset). The target is either a new
// data directory (--data): restore starts the embedded nats-server on it,
// alone and without a port (as the gateway does), and recreates each
// stream from its saved config on a single node (replicas 1, no
// placement); or a new cluster's NATS (--nats, as backup reaches one):
// the streams get their saved replica count, no placement, and restore
// refuses a NATS that holds any of them (but the gateway's empty
// notifications' stream and snapshot bucket, which it replaces). A
// JetStream cluster does not adopt a single node's streams, so a cluster
// is restored through --nats, never by copying a data directory.
//
// Each stream's messages are republished in order so that each lands at
// its original sequence:
//
//   - a stream whose first sequence is past 1 is created with FirstSeq;
//   - a gap (deleted sequences) is filled with messages on a subject of
//     the restore's own, added to the stream for the restore, purged after;
//   - every publish carries Nats-Expected-Last-Sequence, and its ack's
//     sequence is checked: the order is proven, not assumed;
//   - the stream is created with the smallest duplicate window (100 ms),
//     and a message JetStream takes for a duplicate of an earlier one with
//     the same Nats-Msg-Id is sent again once the window has passed: no
//     restored message is dropped;
//   - deletes and purges are allowed while restoring; the saved config
//     (DenyDelete, DenyPurge, the duplicate window, the subjects) is set
//     after the last message.
//
// What differs from the source: each message's JetStream timestamp is the
// restore's (the original is in the backup; the gateway reads timestamps
// for its lag metric only), and each message carries the
// Nats-Expected-Last-Sequence header the restore sent.

// restoreDupWindow is the duplicate window streams are created with
// while restoring: JetStream's smallest.
const restoreDupWindow = 100 * time.Millisecond

// restoreDupRetries bounds how often one message is sent again after
// JetStream took it for a duplicate.
const restoreDupRetries = 5

// runRestore parses restore's flags from args and restores. It returns
// the exit status: 0 restored, 2 refused or failed.
func runRestore(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("gateway restore", flag.ContinueOnError)
	fs.SetOutput(errOut)
	from := fs.String("from", "", "the backup `directory` (gateway backup --out)")
	var data string
	fs.StringVar(&data, "data", "", "the new data `directory` to restore into (new, or empty): a single node")
	nf := addNATSFlags(fs, func(string) string { return "" }, "restore", nil)
	fs.Usage = func() {
		fmt.Fprintf(errOut, "Usage: gateway restore --from BACKUP (--data NEWDIR | --nats URL [flags])\n\nChecks a backup and restores it into a new data directory, or into a new cluster's NATS (docs/OPERATIONS.md, Backups).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	nf.data = &data
	start := time.Now()
	m, err := restore(ctx, *from, nf, out)
	if err != nil {
		fmt.Fprintln(errOut, "gateway restore:", err)
		return 2
	}
	where, how := data, "single node: replicas 1, no placement"
	if data == "" {
		where, how = *nf.url, "the saved replicas, no placement"
	}
	fmt.Fprintf(out, "restore: %d streams from %s (taken %s) into %s in %v; %s\n",
		len(m.Streams), *from, m.Created.Format(time.RFC3339), where, time.Since(start).Round(time.Millisecond), how)
	return 0
}

// restore checks the backup in from and restores it into the target of
// nf: its --data (a new directory) or its --nats (without the streams).
func restore(ctx context.Context, from string, nf natsFlags, out io.Writer) (*manifest, error) {
	single := *nf.data != ""
	switch {
	case from == "":
		return nil, errors.New("--from: give the backup directory")
	case single == (*nf.url != ""):
		return nil, errors.New("give one target: --data NEWDIR (a single node) or --nats URL (a new cluster)")
	}
	if single {
		if err := emptyDir(*nf.data, "--data"); err != nil {
			return nil, err
		}
	}
	m, err := checkBackup(from)
	if err != nil {
		return nil, err
	}
	c, err := openTarget(ctx, nf, m)
	if err != nil {
		return nil, err
	}
	defer c.close()
	for _, e := range restoreOrder(m.Streams) {
		start := time.Now()
		fillers, err := restoreStream(ctx, c.js, from, e, single)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", e.Name, err)
		}
		fmt.Fprintf(out, "stream %s (%s): seq %d..%d, %d messages, %d deleted (%d fillers), restored in %v\n",
			e.Name, e.Role, e.FirstSeq, e.LastSeq, e.Messages, e.Deleted, fillers, time.Since(start).Round(time.Millisecond))
	}
	return m, nil
}

// restoreOrder is the order in which restore recreates streams: the
// members' keys, the snapshot bucket and the notifications' stream before
// the tenants' (a gateway opening a tenant must find the keys that open
// its sealed events), so
// that gateways running on a --nats target, which open each tenant stream
// as it appears and may then store a snapshot or publish a notification,
// find those streams complete and never write into one being restored.
func restoreOrder(streams []streamEntry) []streamEntry {
	rank := map[string]int{roleKeys: -1, roleSnapshots: 0, roleNotifications: 1, roleTenant: 2}
	out := slices.Clone(streams)
	slices.SortStableFunc(out, func(a, b streamEntry) int { return rank[a.Role] - rank[b.Role] })
	return out
}

// openTarget opens the embedded server on a new --data (holding its
// lock), or connects to --nats and clears the way there: it refuses a
// target that holds any of the backup's streams, but for the
// notifications' stream and the snapshot bucket that a gateway creates
// empty at its start, which it deletes.
func openTarget(ctx context.Context, nf natsFlags, m *manifest) (*natsConn, error) {
	if *nf.url == "" {
		return nf.connect()
	}
	c, err := nf.dial()
	if err != nil {
		return nil, err
	}
	var empty []string
	for _, e := range m.Streams {
		s, err := c.js.Stream(ctx, e.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			c.close()
			return nil, fmt.Errorf("--nats: stream %s: %w", e.Name, err)
		}
		if st := s.CachedInfo().State; e.Role == roleTenant || st.LastSeq > 0 {
			c.close()
			return nil, fmt.Errorf("--nats: stream %s exists there (seq %d..%d): restore only into a NATS without the gateway's data", e.Name, st.FirstSeq, st.LastSeq)
		}
		empty = append(empty, e.Name)
	}
	for _, name := range empty {
		if err := c.js.DeleteStream(ctx, name); err != nil {
			c.close()
			return nil, fmt.Errorf("--nats: delete the empty stream %s: %w", name, err)
		}
	}
	return c, nil
}

// ErrBadBackup is the class of a backup that restore refuses.
var ErrBadBackup = errors.New("backup refused")

// checkBackup verifies every file of the backup in dir against
// SHA256SUMS, the manifest against its files, and each stream file's
// framing against its manifest entry; it returns the manifest.
func checkBackup(dir string) (*manifest, error) {
	sums, err := readSums(dir)
	if err != nil {
		return nil, err
	}
	for _, path := range slices.Sorted(maps.Keys(sums)) {
		if err := checkHash(dir, path, sums[path], sumsName); err != nil {
			return nil, err
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBackup, err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadBackup, manifestName, err)
	}
	if m.Format != backupFormat {
		return nil, fmt.Errorf("%w: %s: format %q, want %q", ErrBadBackup, manifestName, m.Format, backupFormat)
	}
	if _, ok := sums[manifestName]; !ok {
		return nil, fmt.Errorf("%w: %s does not list %s", ErrBadBackup, sumsName, manifestName)
	}
	for _, e := range m.Streams {
		if err := checkEntry(dir, &m, e, sums); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// readSums parses SHA256SUMS: path → sha256 hex.
func readSums(dir string) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, sumsName))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBackup, err)
	}
	sums := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		sum, path, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 || path == "" || !filepath.IsLocal(path) {
			return nil, fmt.Errorf("%w: %s: line %d: want \"<sha256>  <file>\"", ErrBadBackup, sumsName, i+1)
		}
		sums[path] = sum
	}
	return sums, nil
}

// checkHash fails unless the sha256 of dir/path is want (from where).
func checkHash(dir, path, want, where string) error {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadBackup, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadBackup, path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%w: %s: sha256 %s, but %s gives %s: the file changed since the backup", ErrBadBackup, path, got, where, want)
	}
	return nil
}

// checkEntry checks stream entry e: its file's hash in the manifest and
// in SHA256SUMS, and its framing and totals.
func checkEntry(dir string, m *manifest, e streamEntry, sums map[string]string) error {
	if !gatewayStream(e.Role, e.Name) || e.Config.Name != e.Name {
		return fmt.Errorf("%w: %s: stream %q (%s): not one a gateway keeps", ErrBadBackup, manifestName, e.Name, e.Role)
	}
	if e.File != filepath.ToSlash(filepath.Join(streamsDir, e.Name+streamFileExt)) || e.SHA256 == "" {
		return fmt.Errorf("%w: %s: stream %s: file %q is not its own", ErrBadBackup, manifestName, e.Name, e.File)
	}
	if sums[e.File] != e.SHA256 || m.Files[e.File] != e.SHA256 {
		return fmt.Errorf("%w: %s: stream %s: sha256 %s differs from %s's or its files list", ErrBadBackup, manifestName, e.Name, e.SHA256, sumsName)
	}
	sum, err := readStreamFile(dir, e, nil)
	if err != nil {
		return err
	}
	if sum != (fileSummary{e.FirstSeq, e.LastSeq, e.Messages, e.Deleted}) {
		return fmt.Errorf("%w: %s: stream %s: the manifest says seq %d..%d, %d messages, %d deleted; the file holds %d..%d, %d, %d",
			ErrBadBackup, manifestName, e.Name, e.FirstSeq, e.LastSeq, e.Messages, e.Deleted, sum.first, sum.last, sum.msgs, sum.deleted)
	}
	return nil
}

// gatewayStream reports whether name is the stream of role that a
// gateway keeps: so a manifest names no other stream, and no file outside
// the backup.
func gatewayStream(role, name string) bool {
	switch role {
	case roleTenant:
		t, ok := strings.CutPrefix(name, tenantStreamPrefix)
		return ok && names.Valid(t)
	case roleSnapshots:
		return name == snapshotStream
	case roleNotifications:
		return name == notify.Stream
	case roleKeys:
		return name == shred.Stream
	}
	return false
}

// restoreStream recreates stream e (on a single node: with one replica)
// and republishes its messages at their
// sequences. It returns how many fillers it published for the gaps.
func restoreStream(ctx context.Context, js jetstream.JetStream, dir string, e streamEntry, single bool) (uint64, error) {
	final := e.Config
	final.Placement = nil // the old cluster's names and tags
	if single {
		final.Replicas = 1
	}
	final.FirstSeq = e.FirstSeq
	filler := "_rankwire_restore." + e.Name
	temp := final
	temp.Subjects = append(slices.Clone(final.Subjects), filler)
	temp.DenyDelete, temp.DenyPurge, temp.Sealed = false, false, false
	if temp.Duplicates > restoreDupWindow || temp.Duplicates == 0 {
		temp.Duplicates = restoreDupWindow
	}
	s, err := js.CreateStream(ctx, temp)
	if err != nil {
		return 0, fmt.Errorf("create: %w", err)
	}
	p := &republisher{js: js, s: s, filler: filler}
	if _, err := readStreamFile(dir, e, func(rec record) error { return p.record(ctx, rec) }); err != nil {
		return p.fillers, err
	}
	if err := p.settle(ctx, len(p.inflight)); err != nil {
		return p.fillers, err
	}
	if p.fillers > 0 {
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(filler)); err != nil {
			return p.fillers, fmt.Errorf("purge the fillers: %w", err)
		}
	}
	if _, err := js.UpdateStream(ctx, final); err != nil {
		return p.fillers, fmt.Errorf("set the saved config: %w", err)
	}
	return p.fillers, checkRestored(ctx, s, e)
}

// checkRestored compares the restored stream's state with the backup's.
func checkRestored(ctx context.Context, s jetstream.Stream, e streamEntry) error {
	info, err := s.Info(ctx)
	if err != nil {
		return err
	}
	st := info.State
	if st.LastSeq != e.LastSeq || st.Msgs != e.Messages || (e.Messages > 0 && st.FirstSeq != e.FirstSeq) {
		return fmt.Errorf("restored seq %d..%d with %d messages, the backup holds seq %d..%d with %d",
			st.FirstSeq, st.LastSeq, st.Msgs, e.FirstSeq, e.LastSeq, e.Messages)
	}
	return nil
}

// republisher publishes a stream file's records in order, up to
// restoreWindow at a time (a round trip per message would bound a restore
// to a few thousand messages a second). Order stays proven: each publish
// expects the sequence before its own, so where one is not stored every
// later one in flight is refused too, and recover resends them.
type republisher struct {
	js       jetstream.JetStream
	s        jetstream.Stream
	filler   string
	fillers  uint64
	inflight []*inflight // oldest first
}

// inflight is a message sent and not yet settled.
type inflight struct {
	seq  uint64
	msg  *nats.Msg
	ack  jetstream.PubAckFuture // nil: not sent (recover sends it)
	done bool                   // answered (a future answers once): got holds it
	got  *jetstream.PubAck      // nil: failed
}

// restoreWindow bounds the publishes in flight on a stream;
// restoreAckWait how long one may go unanswered.
const (
	restoreWindow  = 256
	restoreAckWait = 30 * time.Second
)

// record publishes a message at its sequence, or a filler for each
// sequence of a gap.
func (p *republisher) record(ctx context.Context, rec record) error {
	if rec.kind == recGap {
		for seq := rec.seq; seq <= rec.last; seq++ {
			if err := p.send(ctx, &nats.Msg{Subject: p.filler}, seq); err != nil {
				return err
			}
			p.fillers++
		}
		return nil
	}
	msg := &nats.Msg{Subject: rec.subject, Header: rec.hdr, Data: rec.data}
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	return p.send(ctx, msg, rec.seq)
}

// send publishes msg for seq without waiting for its ack; with
// restoreWindow in flight it settles the older half first.
func (p *republisher) send(ctx context.Context, msg *nats.Msg, seq uint64) error {
	ack, err := p.js.PublishMsgAsync(msg, jetstream.WithExpectLastSequence(seq-1))
	if err != nil {
		ack = nil // too many pending, or the connection: recover sends it
	}
	p.inflight = append(p.inflight, &inflight{seq: seq, msg: msg, ack: ack})
	if ack == nil {
		return p.recover(ctx)
	}
	if len(p.inflight) < restoreWindow {
		return nil
	}
	return p.settle(ctx, len(p.inflight)/2)
}

// settle waits for the n oldest acks. Where one is not the message stored
// at its sequence, recover takes over.
func (p *republisher) settle(ctx context.Context, n int) error {
	for _, f := range p.inflight[:n] {
		if ack := f.answer(ctx); ack == nil || ack.Sequence != f.seq || ack.Duplicate {
			return p.recover(ctx)
		}
	}
	p.inflight = append(p.inflight[:0], p.inflight[n:]...)
	return nil
}

// answer waits for f's ack, at most restoreAckWait; nil where f was not
// sent, failed or was not answered.
func (f *inflight) answer(ctx context.Context) *jetstream.PubAck {
	if f.done || f.ack == nil {
		return f.got
	}
	t := time.NewTimer(restoreAckWait)
	defer t.Stop()
	select {
	case f.got = <-f.ack.Ok():
	case <-f.ack.Err():
	case <-ctx.Done():
		return nil // not answered yet: asked again, it waits again
	case <-t.C:
	}
	f.done = true
	return f.got
}

// recover waits until every message in flight is answered, asks the
// stream for its last sequence (the messages up to it are stored, in
// order: each expected the one before), and sends the others again, one
// at a time.
func (p *republisher) recover(ctx context.Context) error {
	for _, f := range p.inflight {
		f.answer(ctx)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	info, err := p.s.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream info: %w", err)
	}
	for _, f := range p.inflight {
		if f.seq > info.State.LastSeq {
			if err := p.publish(ctx, f.msg, f.seq); err != nil {
				return err
			}
		}
	}
	p.inflight = p.inflight[:0]
	return nil
}

// publish stores msg at seq: it expects seq-1 to be the stream's last,
// and checks the ack. A duplicate (an earlier message with the same
// Nats-Msg-Id, within the window) is sent again after the window.
func (p *republisher) publish(ctx context.Context, msg *nats.Msg, seq uint64) error {
	for try := 0; ; try++ {
		ack, err := p.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequence(seq-1))
		if err != nil {
			return fmt.Errorf("publish seq %d: %w", seq, err)
		}
		if ack.Sequence == seq && !ack.Duplicate {
			return nil
		}
		if !ack.Duplicate || try == restoreDupRetries {
			return fmt.Errorf("publish seq %d: stored at seq %d (duplicate %v)", seq, ack.Sequence, ack.Duplicate)
		}
		select { // JetStream forgets an id within two windows
		case <-time.After(3 * restoreDupWindow):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// runBackupCommand runs `gateway backup` or `gateway restore` (verb)
// under SIGTERM and interrupt, and returns the exit status.
func runBackupCommand(verb string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if verb == "backup" {
		return runBackup(ctx, args, os.Getenv, os.Stdout, os.Stderr)
	}
	return runRestore(ctx, args, os.Stdout, os.Stderr)
}
