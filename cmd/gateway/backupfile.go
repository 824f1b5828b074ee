package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/snapbucket"
)

// The backup's format, written by backup.go and read back by restore.go.
// A backup is a directory: DIR/manifest.json (each stream's
// config as StreamInfo gave it, first and last sequence, message count,
// deletions, size and sha256 of its file; and the sha256 of every file),
// DIR/streams/<stream>.rwb (one framed file per stream, below) and
// DIR/SHA256SUMS (sha256sum's format, over every file, the manifest
// included: `sha256sum -c SHA256SUMS` checks a copy).
//
// A stream file is the magic line "RWBACKUP1\n", then records, every
// number big-endian:
//
//	'M' seq u64, time u64 (JetStream's, Unix ns), subject u16+bytes,
//	    headers u16 count × (key u16+bytes, values u16 count × u32+bytes),
//	    data u32+bytes                                         a message
//	'G' first u64, last u64                 deleted sequences (a gap), inclusive
//	'E' last u64, messages u64              the end: the cut and the count
//
// The first record's sequence is the stream's first; each record starts
// at the sequence after the previous one's, so every sequence up to the
// cut is a message or in a gap: sequences are kept exactly.

// These name what the hub keeps (its unexported streamPrefix, and the
// shared snapshots' object store's stream).
const (
	tenantStreamPrefix = "RW_"
	snapshotStream     = snapbucket.Stream

	backupFormat   = "rankwire-backup/1"
	manifestName   = "manifest.json"
	sumsName       = "SHA256SUMS"
	streamsDir     = "streams"
	streamFileExt  = ".rwb"
	backupMagic    = "RWBACKUP1\n"
	recMessage     = 'M'
	recGap         = 'G'
	recEnd         = 'E'
	backupBatch    = 1000
	backupFetchMax = 2 * time.Second // an empty fetch this long: the stream has nothing more
)

// Roles of the streams in a backup.
const (
	roleSnapshots     = "snapshots"
	roleTenant        = "tenant"
	roleNotifications = "notifications"
	roleKeys          = "keys" // the members' keys of sealed personal data (internal/shred)
)

// manifest is manifest.json.
type manifest struct {
	Format  string            `json:"format"`
	Created time.Time         `json:"created"`
	Source  string            `json:"source"`
	Streams []streamEntry     `json:"streams"`
	Files   map[string]string `json:"files"` // every file but the manifest and SHA256SUMS: path → sha256 hex
}

// streamEntry is one stream of a backup.
type streamEntry struct {
	Name     string                 `json:"name"`
	Role     string                 `json:"role"`
	File     string                 `json:"file"` // relative to the backup directory
	Config   jetstream.StreamConfig `json:"config"`
	FirstSeq uint64                 `json:"first_seq"` // the first record's sequence (LastSeq+1 when empty)
	LastSeq  uint64                 `json:"last_seq"`  // the cut
	Messages uint64                 `json:"messages"`
	Deleted  uint64                 `json:"deleted"` // sequences in gaps
	Bytes    int64                  `json:"bytes"`
	SHA256   string                 `json:"sha256"`
}

// frameWriter writes a stream file's records, tracking the next sequence.
type frameWriter struct {
	w       *bufio.Writer
	err     error
	n       int64 // bytes written
	next    uint64
	first   uint64 // the first record's sequence; 0 before it
	msgs    uint64
	deleted uint64
}

func (w *frameWriter) raw(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
		w.n += int64(len(b))
	}
}

func (w *frameWriter) u8(v byte) { w.raw([]byte{v}) }
func (w *frameWriter) u16(v int) { w.raw(binary.BigEndian.AppendUint16(nil, uint16(v))) }
func (w *frameWriter) u32(v int) { w.raw(binary.BigEndian.AppendUint32(nil, uint32(v))) }
func (w *frameWriter) u64(v uint64) {
	w.raw(binary.BigEndian.AppendUint64(nil, v))
}
func (w *frameWriter) str16(s string) { w.u16(len(s)); w.raw([]byte(s)) }

// gapTo writes a gap record for the sequences before seq not yet written;
// the first record of a stream needs none: it sets the first sequence.
func (w *frameWriter) gapTo(seq uint64) {
	if w.first == 0 {
		w.first, w.next = seq, seq
		return
	}
	if seq > w.next {
		w.u8(recGap)
		w.u64(w.next)
		w.u64(seq - 1)
		w.deleted += seq - w.next
		w.next = seq
	}
}

// message writes one message record at seq (after any gap before it).
func (w *frameWriter) message(seq uint64, ts time.Time, subject string, hdr nats.Header, data []byte) error {
	if seq < w.next || (w.first != 0 && seq < w.first) {
		return fmt.Errorf("message at seq %d after seq %d: out of order", seq, w.next-1)
	}
	if len(subject) > 0xffff || len(hdr) > 0xffff || uint64(len(data)) > maxFrameData {
		return fmt.Errorf("message at seq %d: too large to frame", seq)
	}
	w.gapTo(seq)
	w.u8(recMessage)
	w.u64(seq)
	w.u64(uint64(ts.UnixNano()))
	w.str16(subject)
	keys := make([]string, 0, len(hdr))
	for k := range hdr {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic: the same stream backs up to the same bytes
	w.u16(len(keys))
	for _, k := range keys {
		w.str16(k)
		w.u16(len(hdr[k]))
		for _, v := range hdr[k] {
			w.u32(len(v))
			w.raw([]byte(v))
		}
	}
	w.u32(len(data))
	w.raw(data)
	w.next, w.msgs = seq+1, w.msgs+1
	return w.err
}

// end writes the gap up to last, if any, and the end record.
func (w *frameWriter) end(last uint64) {
	if w.first == 0 { // no message: the stream is empty after last
		w.first, w.next = last+1, last+1
	}
	w.gapTo(last + 1)
	w.u8(recEnd)
	w.u64(last)
	w.u64(w.msgs)
}

func (w *frameWriter) flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// maxFrameData bounds a message's data in a stream file (JetStream's own
// limit is far lower): a corrupt length cannot make restore allocate more.
const maxFrameData = 64 << 20

// writeManifest writes manifest.json, then SHA256SUMS over every file.
func writeManifest(dest string, m *manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := writeSynced(filepath.Join(dest, manifestName), data); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	sums := maps.Clone(m.Files)
	sums[manifestName] = hex.EncodeToString(sum[:])
	var b strings.Builder
	for _, path := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&b, "%s  %s\n", sums[path], path)
	}
	return writeSynced(filepath.Join(dest, sumsName), []byte(b.String()))
}

// writeSynced writes a new file and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fileSummary is what a stream file holds.
type fileSummary struct {
	first, last, msgs, deleted uint64
}

// record is one record of a stream file.
type record struct {
	kind    byte
	seq     uint64 // a message's, or a gap's first
	last    uint64 // a gap's last, or the end's
	count   uint64 // the end's message count
	ts      int64
	subject string
	hdr     nats.Header
	data    []byte
}

// FrameError is bad framing in a stream file, at a byte offset.
type FrameError struct {
	File   string
	Offset int64
	Msg    string
}

func (e *FrameError) Error() string {
	return fmt.Sprintf("%v: %s: offset %d: %s", ErrBadBackup, e.File, e.Offset, e.Msg)
}

func (e *FrameError) Unwrap() error { return ErrBadBackup }

// readStreamFile reads e's file, checking the framing and that every
// sequence follows the one before, and hands each message and gap record
// to f (where not nil). It returns what the file holds.
func readStreamFile(dir string, e streamEntry, f func(record) error) (fileSummary, error) {
	var sum fileSummary
	file, err := os.Open(filepath.Join(dir, filepath.FromSlash(e.File)))
	if err != nil {
		return sum, fmt.Errorf("%w: %v", ErrBadBackup, err)
	}
	defer file.Close()
	r := &frameReader{r: bufio.NewReaderSize(file, 1<<20), file: e.File}
	if magic := r.bytes(len(backupMagic)); r.err == nil && string(magic) != backupMagic {
		return sum, r.fail(0, "not a rankwire backup stream file")
	}
	next := uint64(0)
	for {
		at := r.off
		rec := r.record()
		if r.err != nil {
			return sum, r.err
		}
		if next == 0 && rec.kind != recEnd {
			next, sum.first = rec.seq, rec.seq
		}
		switch rec.kind {
		case recMessage, recGap:
			if rec.seq != next || (rec.kind == recGap && rec.last < rec.seq) {
				return sum, r.fail(at, fmt.Sprintf("record at seq %d, want seq %d", rec.seq, next))
			}
			if rec.kind == recGap {
				sum.deleted += rec.last - rec.seq + 1
				next = rec.last + 1
			} else {
				sum.msgs++
				next++
			}
			if f != nil {
				if err := f(rec); err != nil {
					return sum, err
				}
			}
		case recEnd:
			if next == 0 {
				next, sum.first = rec.last+1, rec.last+1
			}
			if rec.last+1 != next || rec.count != sum.msgs {
				return sum, r.fail(at, fmt.Sprintf("the end says seq %d and %d messages; the records hold seq %d and %d", rec.last, rec.count, next-1, sum.msgs))
			}
			if _, err := r.r.ReadByte(); err != io.EOF {
				return sum, r.fail(r.off, "bytes after the end record")
			}
			sum.last = rec.last
			return sum, nil
		}
	}
}

// frameReader reads a stream file's records, keeping the offset for errors.
type frameReader struct {
	r    *bufio.Reader
	file string
	off  int64
	err  error
}

func (r *frameReader) fail(at int64, msg string) error {
	if r.err == nil {
		r.err = &FrameError{File: r.file, Offset: at, Msg: msg}
	}
	return r.err
}

func (r *frameReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		r.fail(r.off, fmt.Sprintf("cut short: %d bytes wanted (the file is truncated)", n))
		return nil
	}
	r.off += int64(n)
	return b
}

func (r *frameReader) u16() int {
	if b := r.bytes(2); b != nil {
		return int(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *frameReader) u32() int {
	if b := r.bytes(4); b != nil {
		return int(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *frameReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (r *frameReader) str16() string { return string(r.bytes(r.u16())) }

// record reads one record; r.err is set where it is bad.
func (r *frameReader) record() record {
	at := r.off
	kind := r.bytes(1)
	if r.err != nil {
		return record{}
	}
	rec := record{kind: kind[0]}
	switch rec.kind {
	case recGap:
		rec.seq, rec.last = r.u64(), r.u64()
	case recEnd:
		rec.last, rec.count = r.u64(), r.u64()
	case recMessage:
		r.message(&rec)
	default:
		r.fail(at, fmt.Sprintf("unknown record kind 0x%02x", rec.kind))
	}
	return rec
}

// message reads the rest of a message record into rec.
func (r *frameReader) message(rec *record) {
	rec.seq, rec.ts = r.u64(), int64(r.u64())
	rec.subject = r.str16()
	if n := r.u16(); n > 0 {
		rec.hdr = nats.Header{}
		for range n {
			k := r.str16()
			for range r.u16() {
				rec.hdr[k] = append(rec.hdr[k], string(r.bytes(r.u32())))
			}
		}
	}
	at := r.off
	n := r.u32()
	if n > maxFrameData {
		r.fail(at, fmt.Sprintf("message at seq %d: data length %d past the limit", rec.seq, n))
		return
	}
	rec.data = r.bytes(n)
	if r.err == nil && (rec.seq == 0 || rec.subject == "") {
		r.fail(at, fmt.Sprintf("message at seq %d without a sequence or subject", rec.seq))
	}
}
