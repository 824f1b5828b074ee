package security

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The two tenants. Everything of tenant B that a test seeds carries one of
// bMarkers, so that a response can be searched for a leak.
const (
	tenantA = "casino-a"
	tenantB = "casino-b"
	tenantC = "casino-c" // a third tenant with small limits, for floods
)

// boardsC is tenant C's board limit in the key file.
const boardsC = 5

// bMarkers are strings that only tenant B's data contains: its board name,
// its members' prefix, its alias and its score. (Not its tenant name: an
// attacker's token may carry it, and a refusal may quote the token.)
var bMarkers = []string{"zebra-vault", "zq-", "zq@b.example", "7654321"}

// gw is the gateway under attack: one process for the whole suite, so that
// the suite stays within a minute on a loaded machine.
var gw *gateway

// gateway is a running gateway binary.
type gateway struct {
	cmd  *exec.Cmd
	pid  int
	addr string // host:port of the API

	mu  sync.Mutex // guards log
	log strings.Builder

	secretA, secretB, secretC []byte
	rsaA                      *rsa.PrivateKey // kid a2's private half: tenant A's RS256 key
	rsaPubPEM                 []byte          // kid a2's public key as written in the key file
	done                      chan struct{}
}

func TestMain(m *testing.M) {
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "security suite:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// runSuite builds and starts the gateway, seeds both tenants and runs the
// tests; the gateway is killed afterwards whatever happened.
func runSuite(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "rankwire-security-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if binPath, err = buildGateway(dir); err != nil {
		return 0, err
	}
	g, err := startGateway(dir, nil)
	if g != nil {
		defer g.stop()
	}
	if err != nil {
		return 0, err
	}
	gw = g
	if err := seed(g); err != nil {
		return 0, fmt.Errorf("seeding: %w\n%s", err, g.logText())
	}
	code := m.Run()
	// Never log a token: search the whole log for every token the suite
	// sent, valid or forged.
	if leaked := tokensInLog(g.logText()); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the gateway's log holds %d of the tokens sent to it, e.g. %.60s...\n", len(leaked), leaked[0])
		code = 1
	}
	if strings.Contains(g.logText(), "access_token=") {
		fmt.Fprintln(os.Stderr, "FAIL: the gateway's log holds a URL with access_token")
		code = 1
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "gateway log (last 4 KB):\n%s\n", tail(g.logText(), 4096))
	}
	return code, nil
}

// buildGateway compiles ./cmd/gateway into dir: the binary operators run,
// not a test stand-in.
func buildGateway(dir string) (string, error) {
	bin := filepath.Join(dir, "gateway")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/rankwire/rankwire/cmd/gateway")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

var readyLine = regexp.MustCompile(`msg=ready addr=(\S+)`)

// binPath is the gateway binary that TestMain built.
var binPath string

// startGateway writes the key file into dir and starts the gateway binary
// on a free loopback port with its metrics on another, configured through
// the environment (RANKWIRE_*: a flag the binary does not know yet is then
// ignored rather than fatal), and waits for its ready line. wrap, where
// given, is a command that runs the binary (prlimit and its flags); env
// adds RANKWIRE_* settings.
func startGateway(dir string, wrap []string, env ...string) (*gateway, error) {
	g := &gateway{done: make(chan struct{})}
	keys, err := g.writeKeys(dir)
	if err != nil {
		return nil, err
	}
	argv := append(append([]string{}, wrap...), binPath)
	g.cmd = exec.Command(argv[0], argv[1:]...)
	g.cmd.Env = append(os.Environ(),
		"RANKWIRE_ADDR=127.0.0.1:0", "RANKWIRE_METRICS_ADDR=127.0.0.1:0",
		"RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+filepath.Join(dir, "data"),
		"RANKWIRE_PUSH_INTERVAL=20ms")
	g.cmd.Env = append(g.cmd.Env, env...)
	stderr, err := g.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	g.pid = g.cmd.Process.Pid
	ready := make(chan string, 1)
	go g.scan(stderr, ready)
	select {
	case g.addr = <-ready:
		return g, nil
	case <-g.done:
		return g, fmt.Errorf("gateway exited before ready:\n%s", g.logText())
	case <-time.After(60 * time.Second):
		return g, fmt.Errorf("gateway not ready after 60 s:\n%s", g.logText())
	}
}

// scan keeps the gateway's log and reports its ready address.
func (g *gateway) scan(stderr io.Reader, ready chan<- string) {
	defer close(g.done)
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		g.mu.Lock()
		g.log.WriteString(line + "\n")
		g.mu.Unlock()
		if m := readyLine.FindStringSubmatch(line); m != nil {
			select {
			case ready <- m[1]:
			default:
			}
		}
	}
	_ = g.cmd.Wait()
}

func (g *gateway) logText() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.log.String()
}

// stop kills the gateway (by its PID) and waits for it.
func (g *gateway) stop() {
	_ = g.cmd.Process.Kill()
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
	}
}

// writeKeys writes the key file: tenant A with an HS256 key (a1) and an
// RS256 key (a2), tenant B with an HS256 key (b1), tenant C with an HS256
// key (c1) and limits of 100 submissions a second, 3 connections and
// boardsC boards.
func (g *gateway) writeKeys(dir string) (string, error) {
	g.secretA, g.secretB = []byte(strings.Repeat("A", 32)+"-tenant-a"), []byte(strings.Repeat("B", 32)+"-tenant-b")
	g.secretC = []byte(strings.Repeat("C", 32) + "-tenant-c")
	var err error
	if g.rsaA, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return "", err
	}
	der, err := x509.MarshalPKIXPublicKey(&g.rsaA.PublicKey)
	if err != nil {
		return "", err
	}
	g.rsaPubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	type key struct {
		Kid, Alg  string
		Secret    string `json:"secret,omitempty"`
		PublicKey string `json:"public_key,omitempty"`
	}
	// Board and identity write rates are high everywhere: the attacks write
	// boards faster than the default 10/s (api's quota tests meet the rates).
	writes := map[string]any{"board_writes_per_second": 1e6, "identity_writes_per_second": 1e6}
	file := map[string]any{"tenants": map[string]any{
		tenantA: map[string]any{"keys": []key{
			{Kid: "a1", Alg: "HS256", Secret: base64.StdEncoding.EncodeToString(g.secretA)},
			{Kid: "a2", Alg: "RS256", PublicKey: string(g.rsaPubPEM)},
		}, "limits": writes},
		tenantB: map[string]any{"keys": []key{{Kid: "b1", Alg: "HS256", Secret: base64.StdEncoding.EncodeToString(g.secretB)}}, "limits": writes},
		// Tenant C is the flooder: small limits, so that reaching them is cheap.
		tenantC: map[string]any{"keys": []key{{Kid: "c1", Alg: "HS256", Secret: base64.StdEncoding.EncodeToString(g.secretC)}},
			"limits": map[string]any{"submissions_per_second": 100, "connections": 3, "boards": boardsC,
				"board_writes_per_second": 1e6, "identity_writes_per_second": 1e6}},
	}}
	body, err := json.Marshal(file)
	if err != nil {
		return "", err
	}
	// The key file's fields are lower case; json.Marshal kept Kid and Alg.
	body = []byte(strings.NewReplacer(`"Kid"`, `"kid"`, `"Alg"`, `"alg"`).Replace(string(body)))
	path := filepath.Join(dir, "keys.json")
	return path, os.WriteFile(path, body, 0o600)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (g *gateway) url(path string) string { return "http://" + g.addr + path }

// client is the suite's HTTP client: every request is bounded.
var client = &http.Client{Timeout: 15 * time.Second}

// reply is an HTTP answer, read whole.
type reply struct {
	status int
	body   string
}

// do sends one request with token (none where empty) and reads the answer.
func do(t testing.TB, method, path, token, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, gw.url(path), strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return send(t, req)
}

func send(t testing.TB, req *http.Request) reply {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL.Path, err)
	}
	return reply{resp.StatusCode, string(b)}
}

// mustOK fails t unless the request answered 200.
func mustOK(t testing.TB, method, path, token, body string) reply {
	t.Helper()
	r := do(t, method, path, token, body)
	if r.status != 200 {
		t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	return r
}

// noLeak fails t where s holds any of tenant B's markers.
func noLeak(t testing.TB, what, s string) {
	t.Helper()
	for _, m := range bMarkers {
		if strings.Contains(s, m) {
			t.Errorf("%s: answer holds tenant B's %q: %.300s", what, m, s)
		}
	}
}

// codes maps the protocol's error codes to their HTTP statuses.
var codes = map[string]int{
	"bad_request": 400, "unauthorized": 401, "forbidden": 403, "not_found": 404, "method_not_allowed": 405, "conflict": 409,
	"too_large": 413, "rate_limited": 429, "unavailable": 503, "internal": 500,
}

// protocolError decodes an HTTP error body and checks that it is the
// protocol's shape with a code matching status; it returns the message.
func protocolError(t testing.TB, what string, r reply) (code, msg string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Error.Code == "" {
		t.Errorf("%s: %d with a body that is not a protocol error: %.300q", what, r.status, r.body)
		return "", ""
	}
	if want, ok := codes[e.Error.Code]; !ok || want != r.status {
		t.Errorf("%s: status %d with code %q", what, r.status, e.Error.Code)
	}
	return e.Error.Code, e.Error.Message
}
