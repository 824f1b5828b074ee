package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// storedMsg is a stream message as the tests compare it.
type storedMsg struct {
	Seq     uint64
	Subject string
	Header  nats.Header
	Data    string
}

// gappyStore makes a data directory whose tenant stream RW_g has gaps
// (messages deleted through the NATS API: this stream, unlike the
// gateway's, allows it), headers, a message id used twice, and a
// trailing deletion; and the notifications' stream, empty. It returns the
// directory and the messages as stored.
func gappyStore(t *testing.T) (string, []storedMsg) {
	t.Helper()
	dir := t.TempDir()
	c, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx := context.Background()
	s, err := c.js.CreateStream(ctx, jetstream.StreamConfig{Name: "RW_g", Subjects: []string{"rw.g.ev"},
		Duplicates: 200 * time.Millisecond, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.js.CreateStream(ctx, jetstream.StreamConfig{Name: "rankwire_notify", Subjects: []string{"rw.*.notify"}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 12; i++ {
		msg := &nats.Msg{Subject: "rw.g.ev", Data: []byte(fmt.Sprintf("event %d", i)), Header: nats.Header{}}
		id := i
		if i == 10 {
			id = 3 // 3 and 10 share an id:
		}
		msg.Header.Set("Nats-Msg-Id", fmt.Sprintf("id-%d", id))
		if i == 10 {
			awaitDupWindow(t, s) // stored twice in the source, a window apart
		}
		msg.Header.Add("X-Multi", "a")
		msg.Header.Add("X-Multi", "b")
		if _, err := c.js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	for _, seq := range []uint64{1, 2, 5, 6, 7, 12} { // a leading gap, two inside, a trailing one
		if err := s.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	return dir, streamMsgs(t, c.js, "RW_g")
}

// awaitDupWindow waits until the duplicate window of s has passed since
// its last message (JetStream forgets ids within two windows).
func awaitDupWindow(t *testing.T, s jetstream.Stream) {
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(info.State.LastTime.Add(3 * info.Config.Duplicates))) // a window's length, not a guess at readiness
}

// streamMsgs returns every message of stream, by sequence.
func streamMsgs(t *testing.T, js jetstream.JetStream, name string) []storedMsg {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	st := s.CachedInfo().State
	var out []storedMsg
	for seq := st.FirstSeq; seq <= st.LastSeq && st.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		h := m.Header
		delete(h, "Nats-Expected-Last-Sequence") // the restore's own
		if len(h) == 0 {
			h = nil
		}
		out = append(out, storedMsg{m.Sequence, m.Subject, h, string(m.Data)})
	}
	return out
}

// TestRestoreKeepsSequences backs up a stopped store whose stream has
// gaps at the front, inside and at the end, and a message id stored twice,
// restores it, and finds every message at its sequence with its subject,
// headers and data, the same first and last sequence, and the saved
// config (DenyDelete kept as it was).
func TestRestoreKeepsSequences(t *testing.T) {
	src, want := gappyStore(t)
	bdir := filepath.Join(t.TempDir(), "b")
	var out, errOut strings.Builder
	if st := runBackup(context.Background(), []string{"--data", src, "--out", bdir}, noEnv, &out, &errOut); st != 0 {
		t.Fatalf("backup: %d %s", st, errOut.String())
	}
	t.Log(out.String())
	rdir := filepath.Join(t.TempDir(), "r")
	out.Reset()
	if st := runRestore(context.Background(), []string{"--from", bdir, "--data", rdir}, &out, &errOut); st != 0 {
		t.Fatalf("restore: %d %s", st, errOut.String())
	}
	t.Log(out.String())
	c, err := openStore(rdir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	got := streamMsgs(t, c.js, "RW_g")
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Fatalf("restored messages\n%s\nwant\n%s", g, w)
	}
	s, err := c.js.Stream(context.Background(), "RW_g")
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	if st := info.State; st.FirstSeq != 3 || st.LastSeq != 12 || st.Msgs != 6 {
		t.Fatalf("restored state %+v, want seq 3..12 with 6 messages", st)
	}
	if cfg := info.Config; cfg.Duplicates != 200*time.Millisecond || len(cfg.Subjects) != 1 || cfg.DenyDelete {
		t.Fatalf("restored config %+v: not the saved one", cfg)
	}
	ack, err := c.js.Publish(context.Background(), "rw.g.ev", []byte("next"))
	if err != nil || ack.Sequence != 13 {
		t.Fatalf("the next message: %v %v, want seq 13", ack, err)
	}
}

func noEnv(string) string { return "" }

// backupOf backs up the gappy store into a new directory and returns it.
func backupOf(t *testing.T) string {
	t.Helper()
	src, _ := gappyStore(t)
	bdir := filepath.Join(t.TempDir(), "b")
	if st := runBackup(context.Background(), []string{"--data", src, "--out", bdir}, noEnv, io.Discard, io.Discard); st != 0 {
		t.Fatalf("backup: %d", st)
	}
	return bdir
}

// resum rewrites SHA256SUMS (and the manifest's hashes of path) as a
// backup writer would have: for damage that the hashes do not catch.
func resum(t *testing.T, bdir, path string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(bdir, path))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	m := readManifest(t, bdir)
	if path != manifestName {
		m.Files[path] = hex.EncodeToString(sum[:])
		for i := range m.Streams {
			if m.Streams[i].File == path {
				m.Streams[i].SHA256 = m.Files[path]
			}
		}
	}
	for _, f := range []string{manifestName, sumsName} {
		if err := os.Remove(filepath.Join(bdir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeManifest(bdir, m); err != nil {
		t.Fatal(err)
	}
}

func readManifest(t *testing.T, bdir string) *manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(bdir, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// edit rewrites the file path of the backup bdir with f.
func edit(t *testing.T, bdir, path string, f func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(bdir, path)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, f(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusesABadBackup damages a backup in each way named and
// expects restore to refuse it with an error naming the file (and, for
// framing, the offset), leaving the new data directory untouched.
func TestRestoreRefusesABadBackup(t *testing.T) {
	const stream = "streams/RW_g.rwb"
	flip := func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }
	cut := func(b []byte) []byte { return b[:len(b)-5] }
	cases := []struct {
		name   string
		damage func(t *testing.T, bdir string)
		want   string
	}{
		{"a byte flipped", func(t *testing.T, b string) { edit(t, b, stream, flip) },
			stream + ": sha256"},
		{"truncated", func(t *testing.T, b string) { edit(t, b, stream, cut) },
			stream + ": sha256"},
		{"truncated, hashes rewritten", func(t *testing.T, b string) { edit(t, b, stream, cut); resum(t, b, stream) },
			stream + ": offset"},
		{"a record's sequence changed, hashes rewritten", func(t *testing.T, b string) {
			edit(t, b, stream, func(d []byte) []byte { d[len(backupMagic)+8] ^= 0x04; return d }) // the first message's seq
			resum(t, b, stream)
		}, stream + ": offset"},
		{"manifest edited", func(t *testing.T, b string) {
			edit(t, b, manifestName, func(d []byte) []byte {
				return bytes.Replace(d, []byte(`"last_seq": 12`), []byte(`"last_seq": 13`), 1)
			})
		}, manifestName + ": sha256"},
		{"manifest edited, hashes rewritten", func(t *testing.T, b string) {
			m := readManifest(t, b)
			m.Streams[0].LastSeq++
			for _, f := range []string{manifestName, sumsName} {
				os.Remove(filepath.Join(b, f))
			}
			if err := writeManifest(b, m); err != nil {
				t.Fatal(err)
			}
		}, "the manifest says"},
		{"a stream outside the backup, hashes rewritten", func(t *testing.T, b string) {
			m := readManifest(t, b)
			m.Streams[0].Name, m.Streams[0].Config.Name, m.Streams[0].File = "RW_../../x", "RW_../../x", "streams/RW_../../x.rwb"
			for _, f := range []string{manifestName, sumsName} {
				os.Remove(filepath.Join(b, f))
			}
			if err := writeManifest(b, m); err != nil {
				t.Fatal(err)
			}
		}, "not one a gateway keeps"},
		{"SHA256SUMS missing", func(t *testing.T, b string) { os.Remove(filepath.Join(b, sumsName)) }, sumsName},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bdir := backupOf(t)
			tc.damage(t, bdir)
			rdir := filepath.Join(t.TempDir(), "r")
			var errOut strings.Builder
			if st := runRestore(context.Background(), []string{"--from", bdir, "--data", rdir}, io.Discard, &errOut); st != 2 {
				t.Fatalf("restore of a damaged backup: exit %d, want 2", st)
			}
			t.Log(errOut.String())
			if !strings.Contains(errOut.String(), tc.want) || !strings.Contains(errOut.String(), "backup refused") {
				t.Fatalf("restore said %q, want it to name %q", errOut.String(), tc.want)
			}
			if _, err := os.Stat(rdir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the refused restore made %s: %v", rdir, err)
			}
		})
	}
}

// TestRestoreRefusesANonEmptyDir: restore never writes over a directory
// that holds anything, and backup never into one; backup refuses a --data
// without a store (a typo would otherwise back up nothing).
func TestRestoreRefusesANonEmptyDir(t *testing.T) {
	bdir := backupOf(t)
	rdir := t.TempDir()
	if err := os.WriteFile(filepath.Join(rdir, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	if st := runRestore(context.Background(), []string{"--from", bdir, "--data", rdir}, io.Discard, &errOut); st != 2 ||
		!strings.Contains(errOut.String(), "--data "+rdir+": not empty") {
		t.Fatalf("restore into a non-empty dir: exit %d, %q", st, errOut.String())
	}
	errOut.Reset()
	if st := runBackup(context.Background(), []string{"--data", t.TempDir(), "--out", rdir}, noEnv, io.Discard, &errOut); st != 2 ||
		!strings.Contains(errOut.String(), "--out "+rdir+": not empty") {
		t.Fatalf("backup into a non-empty dir: exit %d, %q", st, errOut.String())
	}
	errOut.Reset()
	empty, out := t.TempDir(), filepath.Join(t.TempDir(), "b")
	if st := runBackup(context.Background(), []string{"--data", empty, "--out", out}, noEnv, io.Discard, &errOut); st != 2 ||
		!strings.Contains(errOut.String(), "no gateway's store there") {
		t.Fatalf("backup of a directory without a store: exit %d, %q", st, errOut.String())
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused backup made %s: %v", out, err)
	}
}

// TestRestoreIntoNATS restores into a NATS server (as into a new
// cluster's) on which a gateway's start made the notifications' stream,
// empty: restore replaces it, and every message of the gappy stream is at
// its sequence there. A second restore into it is refused: its streams
// hold data.
func TestRestoreIntoNATS(t *testing.T) {
	src, want := gappyStore(t)
	bdir := filepath.Join(t.TempDir(), "b")
	if st := runBackup(context.Background(), []string{"--data", src, "--out", bdir}, noEnv, io.Discard, io.Discard); st != 0 {
		t.Fatalf("backup: %d", st)
	}
	url := natsServer(t, true)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "rankwire_notify", Subjects: []string{"rw.*.notify"}}); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	if st := runRestore(context.Background(), []string{"--from", bdir, "--nats", url}, &out, &errOut); st != 0 {
		t.Fatalf("restore --nats: %d %s", st, errOut.String())
	}
	t.Log(out.String())
	if got := streamMsgs(t, js, "RW_g"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("restored into NATS\n%v\nwant\n%v", got, want)
	}
	errOut.Reset()
	if st := runRestore(context.Background(), []string{"--from", bdir, "--nats", url}, io.Discard, &errOut); st != 2 ||
		!strings.Contains(errOut.String(), "stream RW_g exists there") {
		t.Fatalf("a second restore --nats: exit %d %q, want refused", st, errOut.String())
	}
	errOut.Reset()
	if st := runRestore(context.Background(), []string{"--from", bdir, "--nats", url, "--data", t.TempDir()}, io.Discard, &errOut); st != 2 ||
		!strings.Contains(errOut.String(), "give one target") {
		t.Fatalf("restore with two targets: exit %d %q, want refused", st, errOut.String())
	}
}
