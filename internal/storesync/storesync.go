// Package storesync is group commit for a lone embedded JetStream: it
// fsyncs the file store's stream files in rounds, each round covering every
// message stored before it began, so that many events share one fsync.
//
// nats-server's file store under SyncAlways fsyncs once per stored message
// on the stream's own goroutine, one message at a time; without it, a
// stream of one replica still writes each message to its block file with
// write(2) before the publish is acknowledged (flush in place: the store's
// fip, which is !AsyncFlush, and AsyncFlush is set only for replicated
// streams or the async persist mode), and fsyncs only every SyncInterval.
// A Syncer closes that gap from outside the store: a message whose stream
// sequence was noted (Note, from a publish's ack, or Await, from the
// consumer that delivered it: both only after the store wrote it) is
// covered by the next round that begins after the note, and Await returns
// once such a round completed. What must not be seen before it is durable
// waits in Await (the hub gates every replica's apply on it), so nothing
// observable precedes the fsync.
//
// A round walks the store (<StoreDir>/jetstream/<account>/streams/<stream>):
// every block file (msgs/<index>.blk, and its .key where encrypted) and
// every top-level file of a stream directory (meta.inf, meta.sum) whose
// size or modification time changed since the last round is fsynced, the
// last block of every stream always; a directory whose entries changed
// (a new block, a new stream) is fsynced too. Consumers' state (obs/) and
// the store's index (msgs/index.db) are not: the store rebuilds its index
// from the blocks at start, and the hub's consumers are in memory. Every
// stream of the store is covered, not only the noted ones: a write that
// preceded a noted one on another stream (a member's key before the event
// sealed with it) is in the round that covers the event.
//
// A stream directory that does not have the layout above (a store of
// another nats-server version) has every file and directory under it
// fsynced instead: slower, never less durable. Supported says which nats-server versions were read
// for this layout; the hub runs the store with SyncAlways for any other.
// A failed fsync is not retried (the kernel may have dropped the pages it
// could not write): the Syncer stops covering anything, logs once, and
// every Await waits until its context ends.
//
// The owner runs Run on a goroutine of its own and ends it with the
// context it passed; Note and Await are safe from any goroutine.
package storesync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Versions are the nats-server versions whose file store layout and flush
// in place were read for this package (filestore.go: writeMsgRecord,
// flushPendingMsgsLocked, the block files' names).
var Versions = []string{"2.15.2"}

// Supported reports whether version (server.VERSION) is one of Versions.
func Supported(version string) bool { return slices.Contains(Versions, version) }

// ErrSync is a failed fsync: nothing is covered after it.
var ErrSync = errors.New("storesync: fsync failed")

// fileMark is what a round saw of one file: a change is a new size or time.
type fileMark struct {
	size  int64
	mtime time.Time
}

// Syncer fsyncs one store's stream files in rounds. Build it with New.
type Syncer struct {
	root string // <StoreDir>/jetstream
	log  *slog.Logger
	kick chan struct{} // capacity 1: a round is wanted

	mu     sync.Mutex
	noted  map[string]uint64 // per stream: the highest sequence known written
	synced map[string]uint64 // per stream: the highest sequence a completed round covers
	done   chan struct{}     // closed when the current round completes, then replaced
	err    error             // the first failed fsync: sticky

	// The round goroutine's own, unguarded.
	files    map[string]fileMark
	dirs     map[string]string // directory: its entries at the last round, joined
	fellBack bool              // a stream without the layout was seen (logged once)
	rounds   uint64            // rounds completed; guarded by mu
}

// New returns a Syncer of the file store under storeDir (the embedded
// server's StoreDir); log nil: slog's default.
func New(storeDir string, log *slog.Logger) *Syncer {
	if log == nil {
		log = slog.Default()
	}
	return &Syncer{root: filepath.Join(storeDir, "jetstream"), log: log, kick: make(chan struct{}, 1),
		noted: map[string]uint64{}, synced: map[string]uint64{}, done: make(chan struct{}),
		files: map[string]fileMark{}, dirs: map[string]string{}}
}

// Note records that stream holds seq, written to its block file: the
// next round covers it. A nil Syncer does nothing.
func (s *Syncer) Note(stream string, seq uint64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	raised := seq > s.noted[stream]
	if raised {
		s.noted[stream] = seq
	}
	s.mu.Unlock()
	if !raised {
		return // a round for it is due or done already
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Await notes seq of stream (the caller saw it stored) and returns once a
// completed round covers it, or ctx's error. A nil Syncer returns at once.
func (s *Syncer) Await(ctx context.Context, stream string, seq uint64) error {
	if s == nil {
		return nil
	}
	s.Note(stream, seq)
	for {
		s.mu.Lock()
		covered, failed, done := s.synced[stream] >= seq, s.err, s.done
		s.mu.Unlock()
		if covered && failed == nil {
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Rounds returns how many rounds completed (metrics, tests).
func (s *Syncer) Rounds() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rounds
}

// Idle is how often Run also looks for written files when nothing was
// noted: the writes of streams nobody awaits (the notifications') are
// fsynced within Idle, as with a store's own sync interval.
const Idle = time.Second

// Run does rounds while any noted sequence is not covered, and one every
// Idle where files changed, until ctx ends.
func (s *Syncer) Run(ctx context.Context) {
	tick := time.NewTicker(Idle)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-tick.C:
		}
		targets, ok := s.pending()
		if !ok {
			continue // failed: nothing is covered any more
		}
		s.complete(targets, s.round(targets))
	}
}

// pending returns the noted sequences not yet covered (none: a round
// that only looks for changed files), or false where the Syncer failed.
func (s *Syncer) pending() (map[string]uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, false
	}
	t := map[string]uint64{}
	for stream, seq := range s.noted {
		if seq > s.synced[stream] {
			t[stream] = seq
		}
	}
	return t, true
}

// complete marks targets covered (unless the round failed) and wakes
// every Await.
func (s *Syncer) complete(targets map[string]uint64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rounds++
	if err != nil {
		s.err = err
		s.log.Error("storesync: fsync of the JetStream store failed; nothing more is acknowledged until a restart", "err", err)
	} else {
		for stream, seq := range targets {
			s.synced[stream] = max(s.synced[stream], seq)
		}
	}
	close(s.done)
	s.done = make(chan struct{})
}

// round fsyncs every stream directory's changed files (the targets' last
// blocks always) and the directories whose entries changed.
func (s *Syncer) round(targets map[string]uint64) error {
	accounts, err := s.dirEntries(s.root)
	if errors.Is(err, os.ErrNotExist) {
		if len(targets) == 0 {
			return nil // no store yet, and nothing to cover
		}
		return s.fallback(filepath.Dir(s.root)) // no store where a sequence was noted: not the layout
	}
	if err != nil {
		return err
	}
	for _, acc := range accounts {
		streamsDir := filepath.Join(s.root, acc, "streams")
		streams, err := s.dirEntries(streamsDir)
		if errors.Is(err, os.ErrNotExist) {
			continue // an account directory without streams
		}
		if err != nil {
			return err
		}
		for _, name := range streams {
			_, noted := targets[name]
			if err := s.syncStream(filepath.Join(streamsDir, name), noted); err != nil {
				return err
			}
		}
	}
	if len(targets) > 0 && len(accounts) == 0 {
		return s.fallback(s.root)
	}
	return nil
}

// syncStream fsyncs one stream directory's changed files; last also its
// last block, changed or not.
func (s *Syncer) syncStream(dir string, last bool) error {
	msgs := filepath.Join(dir, "msgs")
	blocks, err := s.dirEntries(msgs)
	if errors.Is(err, os.ErrNotExist) {
		return s.fallback(dir)
	}
	if err != nil {
		return err
	}
	top, err := s.dirEntries(dir)
	if err != nil {
		return err
	}
	for _, name := range top {
		if strings.HasPrefix(name, "meta.") {
			if err := s.syncChanged(filepath.Join(dir, name), false); err != nil {
				return err
			}
		}
	}
	lastBlk := lastBlock(blocks)
	for _, name := range blocks {
		if strings.HasSuffix(name, ".blk") || strings.HasSuffix(name, ".key") {
			if err := s.syncChanged(filepath.Join(msgs, name), last && name == lastBlk); err != nil {
				return err
			}
		}
	}
	return nil
}

// lastBlock returns the name of the highest-numbered <index>.blk.
func lastBlock(names []string) string {
	best, bestN := "", -1
	for _, name := range names {
		var n int
		if _, err := fmt.Sscanf(name, "%d.blk", &n); err == nil && strings.HasSuffix(name, ".blk") && n > bestN {
			best, bestN = name, n
		}
	}
	return best
}

// syncChanged fsyncs path where its size or time changed since it was
// last synced, or always. A file gone meanwhile (the store removed a
// block) needs nothing.
func (s *Syncer) syncChanged(path string, always bool) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		delete(s.files, path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: stat %s: %w", ErrSync, path, err)
	}
	m := fileMark{size: fi.Size(), mtime: fi.ModTime()}
	if old, ok := s.files[path]; ok && old == m && !always {
		return nil
	}
	if err := fsyncPath(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	s.files[path] = m
	return nil
}

// dirEntries lists dir and fsyncs it where its entries changed since the
// last round (a new block, stream or account: its name must survive too).
func (s *Syncer) dirEntries(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: list %s: %w", ErrSync, dir, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	joined := strings.Join(names, "/")
	if old, ok := s.dirs[dir]; !ok || old != joined {
		if err := fsyncPath(dir); err != nil {
			return nil, err
		}
		if !ok { // first seen: its own entry in its parent too
			if err := fsyncPath(filepath.Dir(dir)); err != nil {
				return nil, err
			}
		}
		s.dirs[dir] = joined
	}
	return names, nil
}

// fallback fsyncs every file and directory under dir: a store or stream
// directory without the layout this package knows.
func (s *Syncer) fallback(dir string) error {
	if !s.fellBack {
		s.fellBack = true
		s.log.Warn("storesync: a store directory without the known layout; fsyncing every file under it instead", "dir", dir)
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("%w: walk %s: %w", ErrSync, path, err)
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		if err := fsyncPath(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	})
}

// fsyncPath opens path read-only and fsyncs it: fsync flushes the file's
// pages whichever descriptor wrote them.
func fsyncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return err
		}
		return fmt.Errorf("%w: open %s: %w", ErrSync, path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSync, path, err)
	}
	return nil
}
