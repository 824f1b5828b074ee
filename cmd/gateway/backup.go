package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/jsread"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/internal/notify"
	"github.com/rankwire/rankwire/internal/shred"
)

// `gateway backup` copies every stream the gateway keeps, message by
// message, into a directory: each tenant's stream (RW_<tenant>), the
// stream under the shared snapshot bucket (OBJ_rankwire_snapshots) and the
// notifications' stream (notify.Stream). It reads through NATS, so the
// gateway may be running (--nats, its --nats-listen and the cluster
// secret), or from a stopped gateway's --data.
//
// Consistency: the snapshot bucket is read first, to the last sequence it
// had when the backup began; then each tenant stream's StreamInfo fixes
// its cut, and the stream is read up to it. A snapshot records the stream
// sequence it was taken at, and a gateway stores it only after applying
// that sequence, so every snapshot in the backup is at or behind its
// stream's cut: none is ahead of its log. Writes acknowledged after a cut
// are not in the backup; every write acknowledged before it is. The
// format: backupfile.go.

// natsFlags are the flags by which a command reaches a gateway's NATS, as
// verify has them.
type natsFlags struct {
	data, url, creds, ca, cert, key, secretFile *string
}

// addNATSFlags registers the NATS flags, and --data with dataDefault's
// value where dataDefault is not nil.
func addNATSFlags(fs *flag.FlagSet, getenv func(string) string, verb string, dataDefault *string) natsFlags {
	f := natsFlags{
		url:        fs.String("nats", getenv("RANKWIRE_NATS"), verb+" through this NATS server or cluster instead of --data's store"),
		creds:      fs.String("nats-creds", "", "NATS credentials `file` for --nats"),
		ca:         fs.String("nats-tls-ca", "", "CA `file` for --nats"),
		cert:       fs.String("nats-tls-cert", "", "client certificate `file` for --nats"),
		key:        fs.String("nats-tls-key", "", "client key `file` for --nats"),
		secretFile: fs.String("cluster-secret-file", "", "the cluster secret `file`, for --nats pointed at a node's --nats-listen"),
	}
	if dataDefault != nil {
		f.data = fs.String("data", *dataDefault, "data `directory` of a stopped gateway to "+verb)
	}
	return f
}

// dial connects to --nats.
func (f natsFlags) dial() (*natsConn, error) {
	secret, err := readSecret(*f.secretFile)
	if err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.Name("rankwire-backup")}
	if secret != "" {
		opts = append(opts, nats.UserInfo(hub.ClientUser, hub.ClientPassword(secret)))
	}
	if *f.creds != "" {
		opts = append(opts, nats.UserCredentials(*f.creds))
	}
	if *f.ca != "" {
		opts = append(opts, nats.RootCAs(*f.ca))
	}
	if *f.cert != "" || *f.key != "" {
		opts = append(opts, nats.ClientCert(*f.cert, *f.key))
	}
	nc, err := nats.Connect(*f.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", *f.url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &natsConn{js: js, close: nc.Close}, nil
}

// natsConn is a connection to a gateway's JetStream and what closes it.
type natsConn struct {
	js    jetstream.JetStream
	close func()
}

// connect reaches --nats, or starts the embedded server on a stopped
// gateway's --data (holding its lock).
func (f natsFlags) connect() (*natsConn, error) {
	if *f.url == "" {
		release, err := lockData(*f.data)
		if err != nil {
			return nil, fmt.Errorf("%w (stop the gateway on %s first, or use --nats)", err, *f.data)
		}
		c, err := openStore(*f.data)
		if err != nil {
			release()
			return nil, err
		}
		inner := c.close
		c.close = func() { inner(); release() }
		return c, nil
	}
	return f.dial()
}

// openStore starts a nats-server with JetStream on dir/nats as the
// gateway's embedded one is started (hub/server.go): alone, listening on
// no port, reached in-process.
func openStore(dir string) (*natsConn, error) {
	s, err := server.NewServer(&server.Options{ServerName: "rankwire", DontListen: true, JetStream: true,
		StoreDir: filepath.Join(dir, "nats"), NoSigs: true, NoLog: true})
	if err != nil {
		return nil, fmt.Errorf("embedded nats-server on %s: %w", dir, err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded nats-server on %s: not ready after 10s", dir)
	}
	nc, err := nats.Connect("", nats.InProcessServer(s), nats.Name("rankwire-backup"))
	if err != nil {
		s.Shutdown()
		return nil, fmt.Errorf("connect in-process: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		s.Shutdown()
		return nil, err
	}
	return &natsConn{js: js, close: func() { nc.Close(); s.Shutdown(); s.WaitForShutdown() }}, nil
}

// runBackup parses backup's flags from args and writes the backup. It
// returns the exit status: 0 written, 2 not.
func runBackup(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("gateway backup", flag.ContinueOnError)
	fs.SetOutput(errOut)
	data := or(getenv("RANKWIRE_DATA"), "./data")
	nf := addNATSFlags(fs, getenv, "back up", &data)
	dest := fs.String("out", "", "the backup `directory` to write (new, or empty)")
	fs.Usage = func() {
		fmt.Fprintf(errOut, "Usage: gateway backup --out DIR [--nats URL | --data DIR] [flags]\n\nWrites a consistent copy of every stream the gateway keeps (docs/OPERATIONS.md, Backups).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	start := time.Now()
	m, err := backup(ctx, nf, *dest)
	if err != nil {
		fmt.Fprintln(errOut, "gateway backup:", err)
		return 2
	}
	var msgs uint64
	var size int64
	for _, s := range m.Streams {
		msgs, size = msgs+s.Messages, size+s.Bytes
		fmt.Fprintf(out, "stream %s (%s): seq %d..%d, %d messages, %d deleted, %d bytes\n",
			s.Name, s.Role, s.FirstSeq, s.LastSeq, s.Messages, s.Deleted, s.Bytes)
	}
	fmt.Fprintf(out, "backup: %d streams, %d messages, %d bytes in %s, written to %s in %v\n",
		len(m.Streams), msgs, size, streamsDir, *dest, time.Since(start).Round(time.Millisecond))
	return 0
}

// backup writes the backup of nf's gateway to dest and returns its manifest.
func backup(ctx context.Context, nf natsFlags, dest string) (*manifest, error) {
	if dest == "" {
		return nil, errors.New("--out: give the backup directory")
	}
	if err := emptyDir(dest, "--out"); err != nil {
		return nil, err
	}
	if *nf.url == "" {
		if _, err := os.Stat(filepath.Join(*nf.data, "nats")); err != nil {
			return nil, fmt.Errorf("--data %s: no gateway's store there (%v)", *nf.data, err)
		}
	}
	c, err := nf.connect()
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := os.MkdirAll(filepath.Join(dest, streamsDir), 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	source := "--nats " + *nf.url
	if *nf.url == "" {
		source = "--data " + *nf.data
	}
	m := &manifest{Format: backupFormat, Created: time.Now().UTC(), Source: source, Files: map[string]string{}}
	if err := backupStreams(ctx, c.js, dest, m); err != nil {
		return nil, err
	}
	return m, writeManifest(dest, m)
}

// emptyDir fails unless dir is missing or empty.
func emptyDir(dir, flagName string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", flagName, dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s %s: not empty (it holds %s): give a new or empty directory", flagName, dir, entries[0].Name())
	}
	return nil
}

// backupStreams copies the streams in the consistency rule's order: the
// snapshot bucket, then the tenant streams, each to the cut its
// StreamInfo gave after the bucket was read, then the notifications.
func backupStreams(ctx context.Context, js jetstream.JetStream, dest string, m *manifest) error {
	add := func(s jetstream.Stream, role string) error {
		e, err := backupStream(ctx, s, role, dest)
		if err != nil {
			return fmt.Errorf("stream %s: %w", s.CachedInfo().Config.Name, err)
		}
		m.Streams, m.Files[e.File] = append(m.Streams, e), e.SHA256
		return nil
	}
	if s, err := optionalStream(ctx, js, snapshotStream); err != nil {
		return err
	} else if s != nil {
		if err := add(s, roleSnapshots); err != nil {
			return err
		}
	}
	tenants, err := tenantStreams(ctx, js) // each one's StreamInfo: its cut
	if err != nil {
		return err
	}
	for _, s := range tenants {
		if err := add(s, roleTenant); err != nil {
			return err
		}
	}
	// The keys after the tenants: every key an event in the backup was
	// sealed with existed before that event was published.
	if s, err := optionalStream(ctx, js, shred.Stream); err != nil {
		return err
	} else if s != nil {
		if err := add(s, roleKeys); err != nil {
			return err
		}
	}
	if s, err := optionalStream(ctx, js, notify.Stream); err != nil {
		return err
	} else if s != nil {
		return add(s, roleNotifications)
	}
	return nil
}

// optionalStream returns stream name with its info, or nil where there is none.
func optionalStream(ctx context.Context, js jetstream.JetStream, name string) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	return s, nil
}

// tenantStreams lists the tenant streams (RW_<valid name>), sorted, each
// with its StreamInfo as of now.
func tenantStreams(ctx context.Context, js jetstream.JetStream) ([]jetstream.Stream, error) {
	var list []string
	lister := js.StreamNames(ctx)
	for name := range lister.Name() {
		if t, ok := strings.CutPrefix(name, tenantStreamPrefix); ok && names.Valid(t) {
			list = append(list, name)
		}
	}
	if err := lister.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("list streams: %w", err)
	}
	slices.Sort(list)
	out := make([]jetstream.Stream, 0, len(list))
	for _, name := range list {
		s, err := optionalStream(ctx, js, name)
		if err != nil {
			return nil, err
		}
		if s != nil { // else deleted since the listing
			out = append(out, s)
		}
	}
	return out, nil
}

// backupStream writes stream s, up to the last sequence of its cached
// StreamInfo, to dest/streams/<name>.rwb, synced.
func backupStream(ctx context.Context, s jetstream.Stream, role, dest string) (streamEntry, error) {
	info := s.CachedInfo()
	e := streamEntry{Name: info.Config.Name, Role: role, Config: info.Config, LastSeq: info.State.LastSeq,
		File: filepath.ToSlash(filepath.Join(streamsDir, info.Config.Name+streamFileExt))}
	f, err := os.OpenFile(filepath.Join(dest, e.File), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return e, err
	}
	defer f.Close()
	sum := sha256.New()
	w := &frameWriter{w: bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<20), next: 1}
	w.raw([]byte(backupMagic))
	if info.State.Msgs > 0 {
		if err := copyMessages(ctx, s, e.LastSeq, w); err != nil {
			return e, err
		}
	}
	w.end(e.LastSeq)
	if err := w.flush(); err != nil {
		return e, err
	}
	if err := f.Sync(); err != nil {
		return e, err
	}
	e.FirstSeq, e.Messages, e.Deleted, e.Bytes = w.first, w.msgs, w.deleted, w.n
	e.SHA256 = hex.EncodeToString(sum.Sum(nil))
	return e, f.Close()
}

// copyMessages writes s's messages up to cut, in order, through an
// ordered consumer. It stops at the cut, or where the stream holds
// nothing more (the rest up to the cut is deleted: end writes the gap).
func copyMessages(ctx context.Context, s jetstream.Stream, cut uint64, w *frameWriter) error {
	err := jsread.Read(ctx, s, jsread.Options{Batch: backupBatch, MaxWait: backupFetchMax},
		func(m jetstream.Msg, md *jetstream.MsgMetadata) (bool, error) {
			if md.Sequence.Stream > cut {
				return true, nil
			}
			err := w.message(md.Sequence.Stream, md.Timestamp, m.Subject(), m.Headers(), m.Data())
			return md.Sequence.Stream == cut || md.NumPending == 0, err
		})
	if errors.Is(err, jsread.ErrEnded) {
		return ctx.Err() // nothing more: the messages up to the cut were deleted since
	}
	return err
}
