package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// ackedLog is what the writers had acknowledged: member → the seq its
// submission's answer gave.
type ackedLog struct {
	mu  sync.Mutex
	seq map[string]uint64
}

func (a *ackedLog) add(member string, seq uint64) {
	a.mu.Lock()
	a.seq[member] = seq
	a.mu.Unlock()
}

func (a *ackedLog) copy() map[string]uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.seq)
}

func (a *ackedLog) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.seq)
}

// writeLoad runs k writers submitting a new member each to board live of
// p until stop closes, each one at a time; it returns when all stopped.
func writeLoad(t *testing.T, p *proc, tok string, k int, acked *ackedLog, stop <-chan struct{}, errs chan<- error) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range k {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				member := fmt.Sprintf("w%d-%d", w, i)
				var res struct{ Results []struct{ Seq uint64 } }
				body := fmt.Sprintf(`{"member":%q,"score":%d,"id":%q}`, member, 1000*w+i, member)
				if status, err := call("POST", p.url("/v1/boards/live/scores"), tok, body, &res); status != 200 || len(res.Results) != 1 {
					errs <- fmt.Errorf("submit %s: %d %v", member, status, err)
					return
				}
				acked.add(member, res.Results[0].Seq)
			}
		})
	}
	return &wg
}

// top reads board's top 1000 rows through p.
func top(t *testing.T, p *proc, tok, board string) topPage {
	t.Helper()
	var pg topPage
	if status, err := call("GET", p.url("/v1/boards/"+board+"/top?limit=1000"), tok, "", &pg); status != 200 || err != nil {
		t.Fatalf("top %s: %d %v", board, status, err)
	}
	return pg
}

// TestBackupUnderLoadRestores backs up a running gateway while four
// writers submit through the HTTP API, restores the backup into a new
// directory, runs verify on it (exit 0), and starts a gateway on it: its
// standings are the source's at the backup's cut, exactly the submissions
// acknowledged with a seq up to the cut. Twice: a lone gateway reached
// through its --nats-listen and the cluster secret; and a gateway on an
// external nats-server, whose snapshot (written at a restart) is in the
// shared bucket, which verify then finds equal to the replay: no
// snapshot in the backup is ahead of its log.
func TestBackupUnderLoadRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four gateways")
	}
	t.Run("embedded through --nats-listen", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(secret, []byte("a-test-cluster-secret-0123456789\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		port := freePorts(t, 1)[0]
		backupUnderLoad(t, []string{"RANKWIRE_NATS_LISTEN=127.0.0.1:" + port, "RANKWIRE_CLUSTER_SECRET_FILE=" + secret},
			[]string{"--nats", "nats://127.0.0.1:" + port, "--cluster-secret-file", secret}, false)
	})
	t.Run("external NATS with the shared snapshot", func(t *testing.T) {
		url := natsServer(t, true)
		backupUnderLoad(t, []string{"RANKWIRE_NATS=" + url}, []string{"--nats", url}, true)
	})
}

// backupUnderLoad is TestBackupUnderLoadRestores on a gateway started
// with env, backed up with the flags from; shared: restart the gateway
// before the load, so that its snapshot is in the shared bucket.
func backupUnderLoad(t *testing.T, env, from []string, shared bool) {
	keys, sk := keyFile(t)
	tok := adminToken(t, sk)
	env = append([]string{"RANKWIRE_KEYS=" + keys, "RANKWIRE_DATA=" + t.TempDir()}, env...)
	p := startGateway(t, env...)
	prefill(t, p, tok)
	if shared {
		stop(t, p) // writes the snapshot to the bucket
		p = startGateway(t, env...)
	}
	acked := &ackedLog{seq: map[string]uint64{}}
	halt, errs := make(chan struct{}), make(chan error, 4)
	wg := writeLoad(t, p, tok, 4, acked, halt, errs)
	await.For(t, 10*time.Second, func() error { return atLeast(acked, 40, errs) })
	bdir := filepath.Join(t.TempDir(), "backup")
	var out, errOut strings.Builder
	before := acked.copy() // all in the backup: acknowledged before it began
	start := time.Now()
	if st := runBackup(context.Background(), append(from, "--out", bdir), noEnv, &out, &errOut); st != 0 {
		t.Fatalf("backup: exit %d: %s", st, errOut.String())
	}
	t.Logf("backup in %v, %d submissions acknowledged before it returned:\n%s", time.Since(start), acked.len(), out.String())
	n := acked.len()
	await.For(t, 10*time.Second, func() error { return atLeast(acked, n+40, errs) })
	close(halt)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rdir := restoreChecked(t, bdir, shared)
	sameStream(t, from, rdir, "RW_t1", streamCut(t, bdir, "RW_t1"))
	r := startGateway(t, env[0], "RANKWIRE_DATA="+rdir)
	if got, want := top(t, r, tok, "pre"), top(t, p, tok, "pre"); !reflect.DeepEqual(got, want) {
		t.Fatalf("board pre restored:\n%v\nwant the source's\n%v", got, want)
	}
	livePrefix(t, top(t, r, tok, "live"), acked.copy(), before)
	var prof struct{ Name string }
	if status, err := call("GET", r.url("/v1/members/email:p1@mail.example/profile"), tok, "", &prof); status != 200 || prof.Name != "Player One" {
		t.Fatalf("the sealed profile and alias after the restore (the members' keys restored too): %d %v %+v", status, err, prof)
	}
}

// atLeast reports whether acked holds n submissions, or a writer's error.
func atLeast(acked *ackedLog, n int, errs chan error) error {
	select {
	case err := <-errs:
		errs <- err
		return nil // the caller's check reports it
	default:
	}
	if got := acked.len(); got < n {
		return fmt.Errorf("%d submissions acknowledged, want %d", got, n)
	}
	return nil
}

// prefill creates boards pre and live, gives p1 an alias and a profile
// (sealed in the log: the backup must hold their keys) and submits 3,000
// scores of 500 members to pre, in batches.
func prefill(t *testing.T, p *proc, tok string) {
	t.Helper()
	if status, err := call("POST", p.url("/v1/identities"), tok, `{"member":"p1","aliases":["email:p1@mail.example"]}`, nil); status != 200 {
		t.Fatalf("alias: %d %v", status, err)
	}
	if status, err := call("PUT", p.url("/v1/members/p1/profile"), tok, `{"name":"Player One"}`, nil); status != 200 {
		t.Fatalf("profile: %d %v", status, err)
	}
	for _, b := range []string{"pre", "live"} {
		if status, err := call("PUT", p.url("/v1/boards/"+b), tok, `{}`, nil); status != 200 {
			t.Fatalf("create board %s: %d %v", b, status, err)
		}
	}
	for batch := range 15 {
		var items []string
		for i := range 200 {
			items = append(items, fmt.Sprintf(`{"member":"p%d","score":%d}`, (batch*200+i)%500, batch*200+i))
		}
		if status, err := call("POST", p.url("/v1/boards/pre/scores"), tok, `{"scores":[`+strings.Join(items, ",")+`]}`, nil); status != 200 {
			t.Fatalf("prefill: %d %v", status, err)
		}
	}
}

// streamCut returns the last sequence the backup in bdir holds of stream.
func streamCut(t *testing.T, bdir, stream string) uint64 {
	t.Helper()
	for _, e := range readManifest(t, bdir).Streams {
		if e.Name == stream {
			return e.LastSeq
		}
	}
	t.Fatalf("the backup has no stream %s", stream)
	return 0
}

// restoreChecked restores bdir into a new directory, runs verify on it
// (exit 0, and where shared, the shared snapshot compared) and returns it.
func restoreChecked(t *testing.T, bdir string, shared bool) string {
	t.Helper()
	rdir := filepath.Join(t.TempDir(), "restored")
	var out, errOut strings.Builder
	start := time.Now()
	if st := runRestore(context.Background(), []string{"--from", bdir, "--data", rdir}, &out, &errOut); st != 0 {
		t.Fatalf("restore: exit %d: %s", st, errOut.String())
	}
	t.Logf("restore in %v:\n%s", time.Since(start), out.String())
	out.Reset()
	if st := runVerify(context.Background(), []string{"--data", rdir}, noEnv, &out, io.Discard); st != 0 ||
		shared != strings.Contains(out.String(), "(shared bucket rankwire_snapshots) at seq") {
		t.Fatalf("verify of the restored directory: exit %d:\n%s", st, out.String())
	}
	t.Logf("verify:\n%s", out.String())
	return rdir
}

// sameStream compares stream's messages up to cut in the source (reached
// with the backup's flags from) and in the restored directory rdir.
func sameStream(t *testing.T, from []string, rdir, stream string, cut uint64) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	nf := addNATSFlags(fs, noEnv, "read", new(string))
	if err := fs.Parse(from); err != nil {
		t.Fatal(err)
	}
	c, err := nf.connect()
	if err != nil {
		t.Fatal(err)
	}
	want := streamMsgs(t, c.js, stream)
	c.close()
	for len(want) > 0 && want[len(want)-1].Seq > cut {
		want = want[:len(want)-1]
	}
	r, err := openStore(rdir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if got := streamMsgs(t, r.js, stream); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %s: %d messages, the source's first %d differ", stream, len(got), len(want))
	}
}

// livePrefix checks the restored board live: exactly the submissions
// acknowledged with a window seq up to its own (a prefix of the writes,
// without a hole), and every one acknowledged before the backup began.
func livePrefix(t *testing.T, live topPage, acked, before map[string]uint64) {
	t.Helper()
	got := map[string]bool{}
	for _, row := range live.Rows {
		got[row.Member] = true
	}
	want := map[string]bool{}
	for member, seq := range acked {
		if seq <= live.Seq {
			want[member] = true
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("board live restored at seq %d: %d members, want the %d acknowledged up to it", live.Seq, len(got), len(want))
	}
	for member := range before {
		if !got[member] {
			t.Fatalf("board live restored at seq %d lacks %s, acknowledged (seq %d) before the backup began", live.Seq, member, before[member])
		}
	}
	t.Logf("board live restored at seq %d: %d members; %d acknowledged before the backup, %d in all", live.Seq, len(got), len(before), len(acked))
}
