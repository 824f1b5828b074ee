package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// TestMain lets the test binary run as the gateway itself: a test starts
// os.Args[0] with RANKWIRE_TEST_AS_GATEWAY=1 and configures it through the
// environment, so process tests need no separate build.
func TestMain(m *testing.M) {
	if os.Getenv("RANKWIRE_TEST_AS_GATEWAY") == "1" {
		os.Args = os.Args[:1]
		main()
		os.Exit(0)
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	if tagged.dir != "" {
		os.RemoveAll(tagged.dir)
	}
	os.Exit(code)
}

// built is the gateway binary, built once per test run by builtGateway.
var built struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

// builtGateway returns the real gateway binary, built (go build) into a
// temporary directory on first use: for black-box tests that look at the
// process itself (its sockets, its descriptor limit).
func builtGateway(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "rankwire-gateway-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "gateway")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// tagged is the gateway binary with the test build's failpoints, built
// once per test run by failpointGateway.
var tagged struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

// failpointGateway returns the gateway binary built with
// internal/failpoint's hooks (-tags rankwire_failpoints), and with -race
// where this test binary has it, built into a temporary directory on first
// use.
func failpointGateway(t *testing.T) string {
	t.Helper()
	tagged.once.Do(func() {
		if tagged.dir, tagged.err = os.MkdirTemp("", "rankwire-gateway-failpoints-"); tagged.err != nil {
			return
		}
		tagged.path = filepath.Join(tagged.dir, "gateway")
		args := []string{"build", "-tags", "rankwire_failpoints", "-o", tagged.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			tagged.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if tagged.err != nil {
		t.Fatal(tagged.err)
	}
	return tagged.path
}

// proc is a gateway subprocess.
type proc struct {
	cmd    *exec.Cmd
	addr   string
	stdout *strings.Builder
	done   chan error

	mu  sync.Mutex
	log []string // the lines of its log so far
}

// logged returns the log lines so far that match re.
func (p *proc) logged(re *regexp.Regexp) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.log {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// report returns the log from the first race report or panic on (the last
// 40 lines where there is none), for a failure message.
func (p *proc) report() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := max(0, len(p.log)-40)
	for i, l := range p.log {
		if strings.Contains(l, "WARNING: DATA RACE") || strings.HasPrefix(l, "panic:") {
			from = i
			break
		}
	}
	return strings.Join(p.log[from:min(len(p.log), from+120)], "\n")
}

// races returns the race reports in the process's log, split into those
// with a frame of this module in one of the racing accesses (own) and
// those wholly inside other modules (upstream: nats-server's own races,
// which we cannot mend and must not let fail our tests). The goroutines'
// "created at" stacks do not count: our code starts the embedded server,
// so they name it for races that are not ours.
func (p *proc) races() (own, upstream []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var report []string
	inReport, access, ours := false, false, false
	for _, l := range p.log {
		switch {
		case strings.Contains(l, "WARNING: DATA RACE"):
			report, inReport, access, ours = []string{l}, true, false, false
			continue
		case !inReport:
			continue
		case strings.HasPrefix(l, "=================="):
			if ours {
				own = append(own, strings.Join(report, "\n"))
			} else {
				upstream = append(upstream, strings.Join(report, "\n"))
			}
			inReport = false
			continue
		}
		report = append(report, l)
		switch t := strings.TrimSpace(l); {
		case strings.HasPrefix(t, "Goroutine ") && strings.HasSuffix(t, "created at:"):
			access = false
		case strings.HasSuffix(t, ":") && strings.Contains(t, " at 0x"):
			access = true // "Read at 0x… by goroutine N:", "Previous write at …"
		case access && (strings.HasPrefix(t, "github.com/rankwire/rankwire") || strings.HasPrefix(t, "main.")):
			ours = true
		}
	}
	if inReport { // cut off by a kill: judged on what it printed
		if ours {
			own = append(own, strings.Join(report, "\n"))
		} else {
			upstream = append(upstream, strings.Join(report, "\n"))
		}
	}
	return own, upstream
}

var readyLine = regexp.MustCompile(`msg=ready addr=(\S+)`)

// startGateway starts a gateway subprocess with env (RANKWIRE_* variables)
// and waits for its ready line.
func startGateway(t *testing.T, env ...string) *proc {
	t.Helper()
	return startGatewayCmd(t, []string{os.Args[0]}, env...)
}

// startGatewayCmd is startGateway with the command line argv: the built
// binary (builtGateway), or a wrapper such as prlimit and its arguments
// followed by it.
func startGatewayCmd(t *testing.T, argv []string, env ...string) *proc {
	t.Helper()
	return startGatewayWithin(t, 60*time.Second, argv, env...)
}

// startGatewayWithin is startGatewayCmd waiting up to within for the
// ready line: a start with more work than opening its store (the demo's
// seed) gets a bound of its own.
func startGatewayWithin(t *testing.T, within time.Duration, argv []string, env ...string) *proc {
	t.Helper()
	p, addr := spawnGateway(t, argv, env...)
	select {
	case p.addr = <-addr:
	case err := <-p.done:
		p.done <- err // for the cleanup
		t.Fatalf("gateway exited before ready: %v", err)
	case <-time.After(within):
		t.Fatalf("gateway not ready after %v:\n%s", within, p.report())
	}
	return p
}

// spawnGateway starts the gateway command line argv with env (RANKWIRE_*
// variables) on free API and metrics ports, killed at cleanup, and returns
// it with the channel its ready address will come on; it does not wait.
func spawnGateway(t *testing.T, argv []string, env ...string) (*proc, chan string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	// Any free metrics port: gateways of concurrent tests never collide.
	// A race-built gateway reports races but exits as it would without
	// them: the cleanup fails the test on a report with our code in it and
	// only logs one wholly inside nats-server (see ownRaces).
	base := []string{"RANKWIRE_TEST_AS_GATEWAY=1", "RANKWIRE_ADDR=127.0.0.1:0", "RANKWIRE_METRICS_ADDR=127.0.0.1:0",
		"GORACE=exitcode=0 halt_on_error=0"}
	cmd.Env = append(os.Environ(), append(base, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdout: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stdout = p.stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The exit is put back: a test may have taken it already and put it back.
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		p.done <- <-p.done
		own, upstream := p.races()
		for _, r := range upstream {
			t.Logf("a data race inside nats-server (upstream, not ours), in a gateway process:\n%s", r)
		}
		for _, r := range own {
			t.Errorf("a data race in a gateway process:\n%s", r)
		}
	})
	addr := make(chan string, 1)
	go p.scan(stderr, addr)
	return p, addr
}

// scan reads the gateway's log, reports the ready address, and reports the
// exit once the log ends.
func (p *proc) scan(stderr io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		p.mu.Lock()
		p.log = append(p.log, sc.Text())
		p.mu.Unlock()
		if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
			addr <- m[1]
		}
	}
	p.done <- p.cmd.Wait()
}

func (p *proc) url(path string) string { return "http://" + p.addr + path }

// keyFile writes a key file with tenant "t1" and returns it with a signing key.
func keyFile(t *testing.T) (string, auth.SigningKey) {
	t.Helper()
	secret := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	path := filepath.Join(t.TempDir(), "keys.json")
	body := fmt.Sprintf(`{"tenants":{"t1":{"keys":[{"kid":"k1","alg":"HS256","secret":%q}]}}}`, secret)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	sk, _ := keys.SigningKey("k1")
	return path, sk
}

func adminToken(t *testing.T, sk auth.SigningKey) string {
	tok, err := auth.Mint(sk, auth.Claims{Tenant: "t1", Roles: auth.RoleAdmin, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// call sends a request and decodes the JSON answer into out (if not nil).
func call(method, url, token, body string, out any) (int, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return resp.StatusCode, err
		}
	}
	return resp.StatusCode, nil
}

// TestDemoModeCurlWorks runs the gateway in-process with no key file and
// uses the curl line it prints, token and URL as printed.
func TestDemoModeCurlWorks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	cfg := Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PushInterval: 100 * time.Millisecond}
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out, ready) }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatal(err)
	}
	m := regexp.MustCompile(`curl -s -H "Authorization: Bearer (\S+)" "(\S+)"`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no curl line in:\n%s", out.String())
	}
	var top struct {
		Total int `json:"total"`
		Rows  []struct{ Member string }
	}
	if status, err := call("GET", m[2], m[1], "", &top); status != 200 || err != nil || top.Total != demoPlayers || len(top.Rows) != 5 {
		t.Fatalf("printed curl: %d %v %+v", status, err, top)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// TestSIGTERM: the gateway finishes, writes its snapshot and exits 0.
func TestSIGTERM(t *testing.T) {
	keys, sk := keyFile(t)
	data := t.TempDir()
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+data)
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/b"), tok, "{}", nil); status != 200 || err != nil {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
		p.done <- err // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30 s after SIGTERM")
	}
	snaps, _ := filepath.Glob(filepath.Join(data, "snapshots", "*"))
	if len(snaps) == 0 {
		t.Error("no snapshot written on shutdown")
	}
}
