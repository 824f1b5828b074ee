package main

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// gatewayFlags returns the names of every flag the gateway takes, from its
// own usage text.
func gatewayFlags(t *testing.T) map[string]bool {
	t.Helper()
	var usage strings.Builder
	if _, err := parseConfig([]string{"-h"}, func(string) string { return "" }, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("gateway -h: %v", err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(usage.String(), -1) {
		names[m[1]] = true
	}
	if !names["addr"] || !names["cluster-secret-file"] || len(names) < 25 {
		t.Fatalf("flags read from the usage: %v", names)
	}
	return names
}

// exportedMetrics returns every metric name the gateway's code registers:
// the rankwire_ string literals of its packages (tests excluded).
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	lit := regexp.MustCompile(`"(rankwire_[a-z_]+)"`)
	for _, dir := range []string{"../../api", "../../hub", "../../cmd/gateway", "../../webhook", "../../internal"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			for _, m := range lit.FindAllStringSubmatch(string(src), -1) {
				names[m[1]] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// uncommented returns path's lines that are not comments (# ...).
func uncommented(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestDeployNamesOnlyWhatExists: the Dockerfile, the systemd unit and the
// Kubernetes manifests pass only flags the gateway has, and the alert rules
// and the dashboard use only metrics it exports; the manifests point their
// probes at the gateway's health endpoints.
func TestDeployNamesOnlyWhatExists(t *testing.T) {
	checkDeployFlags(t)
	checkDeployMetrics(t)
}

// checkDeployFlags: every --flag the Dockerfiles, the unit and the
// manifests pass to the gateway is one it has; the files that run it pass
// at least three (else the check read nothing); the manifests keep their
// essentials (probes, three replicas, the headless routes) and the unit its
// LimitNOFILE.
func checkDeployFlags(t *testing.T) {
	t.Helper()
	flags := gatewayFlags(t)
	flagRef := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	manifests, err := filepath.Glob("../../deploy/kubernetes/*.yaml")
	if err != nil || len(manifests) < 3 {
		t.Fatalf("deploy/kubernetes: %v %v", manifests, err)
	}
	runsGateway := []string{"../../Dockerfile", "../../scripts/release.Dockerfile", "../../deploy/systemd/rankwire.service", "../../deploy/kubernetes/rankwire.yaml"}
	for _, path := range append(slices.Clone(runsGateway), manifests...) {
		text := uncommented(t, path)
		if strings.HasSuffix(path, "Dockerfile") { // its other lines are Docker's own (COPY --from)
			var run []string
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "ENTRYPOINT") || strings.HasPrefix(line, "CMD") {
					run = append(run, line)
				}
			}
			text = strings.Join(run, "\n")
		}
		found := 0
		for _, m := range flagRef.FindAllStringSubmatch(text, -1) {
			found++
			if !flags[m[1]] {
				t.Errorf("%s passes --%s: the gateway has no such flag", path, m[1])
			}
		}
		if found < 3 && slices.Contains(runsGateway, path) {
			t.Errorf("%s: only %d flags found: the check reads nothing", path, found)
		}
	}
	k8s := uncommented(t, "../../deploy/kubernetes/rankwire.yaml")
	for _, want := range []string{"path: /readyz", "path: /healthz", "replicas: 3", "--replicas=3", "clusterIP: None"} {
		if !strings.Contains(k8s, want) {
			t.Errorf("the Kubernetes manifests lack %q", want)
		}
	}
	if unit := uncommented(t, "../../deploy/systemd/rankwire.service"); !strings.Contains(unit, "LimitNOFILE=") {
		t.Error("the systemd unit sets no LimitNOFILE")
	}
}

// checkDeployMetrics: the alert rules, the dashboard and OPERATIONS.md use
// only metrics the gateway exports.
func checkDeployMetrics(t *testing.T) {
	t.Helper()
	metrics := exportedMetrics(t)
	metricRef := regexp.MustCompile(`rankwire_[a-z_]+`)
	for _, path := range []string{"../../deploy/prometheus/alerts.yml", "../../deploy/grafana/rankwire.json", "../../docs/OPERATIONS.md"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		used := 0
		for _, name := range metricRef.FindAllString(string(data), -1) {
			base := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				base = strings.TrimSuffix(base, suffix)
			}
			if strings.HasSuffix(name, "_") || base == "rankwire_notify" || base == "rankwire_webhook" {
				continue // a prefix or a stream's name in prose
			}
			used++
			if !metrics[base] {
				t.Errorf("%s uses %s: the gateway exports no such metric", path, name)
			}
		}
		if used < 5 {
			t.Errorf("%s: only %d metrics found: the check reads nothing", path, used)
		}
	}
}

// dockerInstr is one instruction of a Dockerfile: its keyword, its
// arguments (continuation lines joined) and the build stage it belongs to
// (0 for the first FROM).
type dockerInstr struct {
	op, args string
	stage    int
}

// parseDockerfile reads path's instructions, comments and blank lines left
// out, lines ending in a backslash joined to the next.
func parseDockerfile(t *testing.T, path string) []dockerInstr {
	t.Helper()
	var out []dockerInstr
	stage, pending := -1, ""
	for _, line := range strings.Split(uncommented(t, path), "\n") {
		line = strings.TrimSpace(line)
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending += cont + " "
			continue
		}
		line, pending = pending+line, ""
		if line == "" {
			continue
		}
		op, args, _ := strings.Cut(line, " ")
		op = strings.ToUpper(op)
		if op == "FROM" {
			stage++
		}
		out = append(out, dockerInstr{op: op, args: strings.TrimSpace(args), stage: stage})
	}
	return out
}

// nonroot is the user and group the image runs as: distroless's nonroot.
const nonroot = "65532:65532"

// dataVolumeProblems says what is wrong with how the Dockerfile's final
// stage provides /data: it must copy a directory owned by nonroot to /data
// before VOLUME declares it, and run as nonroot. A directory copied from
// another stage must be created there with that owner; one copied from the
// build context is returned as contextDir for the caller to check.
func dataVolumeProblems(ins []dockerInstr) (problems []string, contextDir string) {
	last := ins[len(ins)-1].stage
	copyAt, volumeAt, userAt, entryAt := -1, -1, -1, -1
	var from, src string
	for i, in := range ins {
		if in.stage != last {
			continue
		}
		fields := strings.Fields(in.args)
		switch {
		case in.op == "COPY" && slices.Contains(fields, "--chown="+nonroot) && fields[len(fields)-1] == "/data":
			copyAt, src = i, fields[len(fields)-2]
			for _, f := range fields {
				if v, ok := strings.CutPrefix(f, "--from="); ok {
					from = v
				}
			}
		case in.op == "VOLUME" && strings.Contains(in.args, `"/data"`):
			volumeAt = i
		case in.op == "USER":
			userAt = i
			if in.args != nonroot {
				problems = append(problems, "USER is "+in.args+", want "+nonroot)
			}
		case in.op == "ENTRYPOINT":
			entryAt = i
		}
	}
	switch {
	case copyAt < 0:
		return append(problems, "no COPY --chown="+nonroot+" ... /data in the final stage"), ""
	case volumeAt < copyAt:
		problems = append(problems, "VOLUME /data is missing or comes before the COPY that creates /data")
	case userAt < 0 || userAt > entryAt:
		problems = append(problems, "no USER before ENTRYPOINT")
	}
	if from == "" {
		return problems, src
	}
	return append(problems, stageMakesDir(ins, from, src)...), ""
}

// stageMakesDir says what is wrong with how stage name creates dir: a RUN
// must make it and chown it to nonroot.
func stageMakesDir(ins []dockerInstr, name, dir string) []string {
	stage := -1
	for _, in := range ins {
		if in.op == "FROM" && strings.HasSuffix(strings.ToLower(in.args), " as "+strings.ToLower(name)) {
			stage = in.stage
		}
	}
	for _, in := range ins {
		if in.stage == stage && in.op == "RUN" && strings.Contains(in.args, "mkdir") &&
			regexp.MustCompile(`chown (-R )?`+nonroot+` `+regexp.QuoteMeta(dir)+`\b`).MatchString(in.args) {
			return nil
		}
	}
	return []string{fmt.Sprintf("stage %q does not mkdir %s and chown it to %s", name, dir, nonroot)}
}

// TestDockerfileDataVolume: the image creates /data owned by the user it
// runs as before declaring the volume, so a fresh volume is writable by
// the gateway. A Dockerfile without it (the one this test was written
// against) is refused, so the check reads what it claims to.
func TestDockerfileDataVolume(t *testing.T) {
	if problems, _ := dataVolumeProblems(parseDockerfile(t, "../../Dockerfile")); len(problems) > 0 {
		t.Errorf("Dockerfile: %s", strings.Join(problems, "; "))
	}
	// The release's image copies data/ from its build context, which
	// release.sh writes empty (scripts' TestRelease checks it).
	problems, dir := dataVolumeProblems(parseDockerfile(t, "../../scripts/release.Dockerfile"))
	if len(problems) > 0 || dir != "data" {
		t.Errorf("scripts/release.Dockerfile: %s (copies %q to /data)", strings.Join(problems, "; "), dir)
	}
	broken := filepath.Join(t.TempDir(), "Dockerfile")
	old := "FROM golang AS build\nRUN go build -o /out/gateway .\nFROM distroless\nCOPY --from=build /out/gateway /gateway\n" +
		"USER 65532:65532\nVOLUME [\"/data\"]\nENTRYPOINT [\"/gateway\"]\n"
	if err := os.WriteFile(broken, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if problems, _ := dataVolumeProblems(parseDockerfile(t, broken)); len(problems) == 0 {
		t.Error("a Dockerfile that never creates /data passes the check")
	}
}

// TestDeployBuildLineIsStatic: the build line DEPLOY.md gives makes the
// static binary the text promises (scripts' TestRelease checks that those
// flags do).
func TestDeployBuildLineIsStatic(t *testing.T) {
	line := docBlock(t, "../../docs/DEPLOY.md", "Build")[0]
	for _, want := range []string{"CGO_ENABLED=0 go build", "-trimpath", "-X main.version="} {
		if !strings.Contains(line, want) {
			t.Errorf("DEPLOY.md's build line %q lacks %q", line, want)
		}
	}
}

// asUser returns the command line prefix that runs a command as uid:gid
// with no supplementary groups (setpriv), or skips: switching users needs
// root, and setpriv. Under CI=true a missing part fails instead.
func asUser(t *testing.T, uid, gid int) []string {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	var why string
	switch {
	case os.Geteuid() != 0:
		why = "running as another user needs root"
	case err != nil:
		why = "setpriv not found (util-linux)"
	default:
		return []string{setpriv, fmt.Sprintf("--reuid=%d", uid), fmt.Sprintf("--regid=%d", gid), "--clear-groups"}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return nil
}

// scratchRoot returns a temporary directory that stands for a file
// system's root: owned by root, mode 755, and reachable by other users
// (t.TempDir's parents are 700).
func scratchRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{root, filepath.Dir(root)} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// installAt copies this test binary, which runs as the gateway (TestMain),
// to path with mode 755.
func installAt(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("install", "-m", "755", os.Args[0], path).CombinedOutput()
	if err != nil {
		t.Fatalf("install %s: %v\n%s", path, err, out)
	}
}

// keyFileAt writes a key file with tenant t1 at path, mode 0640.
func keyFileAt(t *testing.T, path string) {
	t.Helper()
	src, _ := keyFile(t)
	out, err := exec.Command("install", "-m", "640", src, path).CombinedOutput()
	if err != nil {
		t.Fatalf("install %s: %v\n%s", path, err, out)
	}
}

// TestImageDataDirAsNonroot runs the gateway as 65532 on a data directory
// made the way the image makes it (under a root-owned parent: mkdir, then
// chown 65532:65532) and reaches /healthz; on the directory a fresh volume
// had before the fix (root's) it exits at its lock file.
func TestImageDataDirAsNonroot(t *testing.T) {
	user := asUser(t, 65532, 65532)
	root := scratchRoot(t)
	bin := filepath.Join(root, "gateway")
	installAt(t, bin)
	keys := filepath.Join(root, "keys.json")
	keyFileAt(t, keys)
	if err := os.Chown(keys, 65532, 65532); err != nil {
		t.Fatal(err)
	}

	rootOwned := filepath.Join(root, "volume-before")
	if err := os.Mkdir(rootOwned, 0o755); err != nil {
		t.Fatal(err)
	}
	p, _ := spawnGateway(t, append(user, bin), "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+rootOwned)
	select {
	case err := <-p.done:
		p.done <- err
		if got := p.logged(regexp.MustCompile(`lock file: .*permission denied`)); len(got) == 0 {
			t.Errorf("on a root-owned data directory the gateway exited (%v) without naming its lock file:\n%s", err, p.report())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the gateway as 65532 neither started nor exited on a root-owned data directory")
	}

	data := filepath.Join(root, "data")
	out, err := exec.Command("sh", "-c", "mkdir -p "+data+" && chown "+nonroot+" "+data).CombinedOutput()
	if err != nil {
		t.Fatalf("mkdir and chown as the image does: %v\n%s", err, out)
	}
	p = startGatewayCmd(t, append(user, bin), "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+data)
	resp, err := http.Get(p.url("/healthz"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz as 65532: %v %v", resp, err)
	}
	resp.Body.Close()
}

// docBlock returns the lines of the first ```sh block after the heading
// "## "+heading in the Markdown file path.
func docBlock(t *testing.T, path, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n## "+heading+"\n")
	_, block, ok2 := strings.Cut(after, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("%s: no sh block under ## %s", path, heading)
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// serviceID stands for the rankwire user and group of the systemd steps,
// which the test does not create (useradd would change this machine).
const serviceID = 65531

// scratchInstall runs an install line of the documented steps with its
// absolute paths under root, relative ones from dir (deploy/... from the
// repository), and the users root and rankwire as ids.
func scratchInstall(t *testing.T, root, dir string, line []string) {
	t.Helper()
	args := []string{}
	for i, a := range line[1:] {
		prev := line[i]
		switch {
		case (prev == "-o" || prev == "-g") && a == "root":
			a = "0"
		case (prev == "-o" || prev == "-g") && a == "rankwire":
			a = fmt.Sprint(serviceID)
		case strings.HasPrefix(a, "/"):
			a = root + a
		case strings.HasPrefix(a, "deploy/"):
			abs, err := filepath.Abs(filepath.Join("../..", a))
			if err != nil {
				t.Fatal(err)
			}
			a = abs
		}
		args = append(args, a)
	}
	cmd := exec.Command("install", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(line, " "), err, out)
	}
}

// wantFile fails the test unless path has mode perm and owner uid:gid.
func wantFile(t *testing.T, path string, perm fs.FileMode, uid, gid int) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != perm || int(st.Uid) != uid || int(st.Gid) != gid {
		t.Errorf("%s: mode %v owner %d:%d, want %v %d:%d", path, fi.Mode().Perm(), st.Uid, st.Gid, perm, uid, gid)
	}
}

// runSystemdSteps runs DEPLOY.md's systemd lines in the scratch root: the
// install lines, with gateway and keys.json in the working directory; the
// lines that act on the machine's users or its systemd are not run.
func runSystemdSteps(t *testing.T, root string) {
	t.Helper()
	work := t.TempDir()
	installAt(t, filepath.Join(work, "gateway"))
	keyFileAt(t, filepath.Join(work, "keys.json"))
	for _, dir := range []string{"usr/local/bin", "etc/systemd/system"} { // there on any systemd machine
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	installs := 0
	for _, line := range docBlock(t, "../../docs/DEPLOY.md", "systemd") {
		args := strings.Fields(line)
		switch args[0] {
		case "install":
			scratchInstall(t, root, work, args)
			installs++
		case "useradd":
			if !slices.Contains(args, "--system") || args[len(args)-1] != "rankwire" {
				t.Errorf("the steps create no system user rankwire: %s", line)
			}
		case "systemctl", "journalctl":
		default:
			t.Fatalf("DEPLOY.md's systemd steps run %q, which this test cannot run in a scratch root", line)
		}
	}
	if installs < 4 {
		t.Fatalf("only %d install lines in DEPLOY.md's systemd steps", installs)
	}
}

// unitFlag returns the value of flag in the installed unit's ExecStart.
func unitFlag(t *testing.T, unit, flag string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^ExecStart=.*\s--` + flag + `[ =](\S+)`).FindStringSubmatch(unit)
	if m == nil {
		t.Fatalf("the unit's ExecStart has no --%s", flag)
	}
	return m[1]
}

// TestDeploySystemdSteps runs DEPLOY.md's systemd steps in a scratch root
// (runSystemdSteps), checks what they leave, and starts the installed
// gateway as the service user with the unit's key file and data directory
// (made as StateDirectory makes it); another user is refused the keys.
// systemd-analyze verify checks the unit where systemd is installed.
func TestDeploySystemdSteps(t *testing.T) {
	service := asUser(t, serviceID, serviceID)
	root := scratchRoot(t)
	runSystemdSteps(t, root)
	wantFile(t, root+"/usr/local/bin/gateway", 0o755, 0, 0)
	wantFile(t, root+"/etc/rankwire", 0o750, 0, serviceID)
	wantFile(t, root+"/etc/rankwire/keys.json", 0o640, 0, serviceID)
	unitPath := root + "/etc/systemd/system/rankwire.service"
	wantFile(t, unitPath, 0o644, 0, 0)
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	keys, data := root+unitFlag(t, string(unit), "keys"), root+unitFlag(t, string(unit), "data")
	if err := os.MkdirAll(filepath.Dir(data), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, serviceID, serviceID); err != nil {
		t.Fatal(err)
	}
	bin := root + "/usr/local/bin/gateway"
	p := startGatewayCmd(t, append(service, bin), "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+data)
	if resp, err := http.Get(p.url("/healthz")); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz of the installed gateway: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	otherData := filepath.Join(root, "other")
	if err := os.Mkdir(otherData, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(otherData, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	other, _ := spawnGateway(t, append(asUser(t, 65532, 65532), bin), "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+otherData)
	err = <-other.done
	other.done <- err
	if err == nil || len(other.logged(regexp.MustCompile(regexp.QuoteMeta(keys)+`.*permission denied`))) == 0 {
		t.Errorf("another user read the installed key file (exit %v):\n%s", err, other.report())
	}
	verifyUnit(t, string(unit), bin)
}

// verifyUnit runs systemd-analyze verify on the unit with its ExecStart
// pointing at bin (the scratch root's binary: verify checks it is
// executable); any complaint fails. Without systemd-analyze it logs why it
// did not run.
func verifyUnit(t *testing.T, unit, bin string) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not found (apt-get install systemd): the unit was not verified")
		return
	}
	path := filepath.Join(t.TempDir(), "rankwire.service")
	unit = strings.Replace(unit, "ExecStart=/usr/local/bin/gateway ", "ExecStart="+bin+" ", 1)
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// yamlBlock returns the lines nested under the first line of text that
// reads head, spaces aside (more indented than it, up to the next that is
// not).
func yamlBlock(t *testing.T, text, head string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != head {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		var b strings.Builder
		for _, n := range lines[i+1:] {
			if strings.TrimSpace(n) != "" && len(n)-len(strings.TrimLeft(n, " ")) <= indent {
				break
			}
			b.WriteString(n + "\n")
		}
		return b.String()
	}
	t.Fatalf("no %s block", head)
	return ""
}

// probe reads a probe's HTTP path, period and failure threshold.
func probe(t *testing.T, block string) (path string, period, failures int) {
	t.Helper()
	m := regexp.MustCompile(`httpGet: \{path: (\S+), port: http\}`).FindStringSubmatch(block)
	p := regexp.MustCompile(`periodSeconds: (\d+)`).FindStringSubmatch(block)
	f := regexp.MustCompile(`failureThreshold: (\d+)`).FindStringSubmatch(block)
	if m == nil || p == nil || f == nil {
		t.Fatalf("a probe without path, periodSeconds or failureThreshold:\n%s", block)
	}
	fmt.Sscan(p[1], &period)
	fmt.Sscan(f[1], &failures)
	return m[1], period, failures
}

// TestKubernetesProbes: the startup probe gives a replay at least 10
// minutes before the liveness probe may restart the pod; liveness reads
// /healthz, readiness /readyz.
func TestKubernetesProbes(t *testing.T) {
	k8s := uncommented(t, "../../deploy/kubernetes/rankwire.yaml")
	path, period, failures := probe(t, yamlBlock(t, k8s, "startupProbe:"))
	if path != "/healthz" || period*failures < 600 {
		t.Errorf("startupProbe on %s allows %d s, want /healthz and at least 600 s", path, period*failures)
	}
	if path, _, _ := probe(t, yamlBlock(t, k8s, "livenessProbe:")); path != "/healthz" {
		t.Errorf("livenessProbe on %s, want /healthz", path)
	}
	if path, _, _ := probe(t, yamlBlock(t, k8s, "readinessProbe:")); path != "/readyz" {
		t.Errorf("readinessProbe on %s, want /readyz", path)
	}
}

// TestKubernetesKeysChecksum runs the manifest's apply line (its sed, up to
// kubectl) on a key file: the pod template's annotation then holds the
// file's SHA-256, so a new key file changes the template.
func TestKubernetesKeysChecksum(t *testing.T) {
	data, err := os.ReadFile("../../deploy/kubernetes/rankwire.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#   (sed .*) \\\n#\s+(deploy/kubernetes/rankwire.yaml) \| kubectl apply -f -$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("rankwire.yaml's header has no sed line that sets the key file's checksum")
	}
	keys, _ := keyFile(t)
	cmd := exec.Command("bash", "-c", string(m[1])+" "+string(m[2]))
	cmd.Dir = filepath.Dir(keys)
	if err := os.Symlink(mustAbs(t, "../../deploy"), filepath.Join(cmd.Dir, "deploy")); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	keyData, _ := os.ReadFile(keys)
	want := fmt.Sprintf(`rankwire.dev/keys-sha256: "%x"`, sha256.Sum256(keyData))
	if err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("the sed line: %v; its output lacks %s", err, want)
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestIngressKeepsWebSockets: the Ingress gives a quiet WebSocket an hour
// (far above the 30 s pings), does not buffer, and points at the service
// port the manifests define.
func TestIngressKeepsWebSockets(t *testing.T) {
	ing := uncommented(t, "../../deploy/kubernetes/ingress.yaml")
	for _, a := range []string{"proxy-read-timeout", "proxy-send-timeout"} {
		m := regexp.MustCompile(`nginx.ingress.kubernetes.io/` + a + `: "(\d+)"`).FindStringSubmatch(ing)
		var secs int
		if m != nil {
			fmt.Sscan(m[1], &secs)
		}
		if secs < 3600 {
			t.Errorf("ingress.yaml: %s is %d s, want at least 3600", a, secs)
		}
	}
	if !strings.Contains(ing, `proxy-buffering: "off"`) {
		t.Error("ingress.yaml buffers responses")
	}
	backend := yamlBlock(t, ing, "service:")
	k8s := uncommented(t, "../../deploy/kubernetes/rankwire.yaml")
	if !strings.Contains(backend, "name: rankwire") || !strings.Contains(backend, "port: {name: http}") ||
		!strings.Contains(k8s, "  name: rankwire\n") || !strings.Contains(k8s, "{name: http, port: 80, targetPort: http}") {
		t.Errorf("ingress.yaml's backend is not the rankwire service's http port:\n%s", backend)
	}
}

// sidecarScript returns keys-reload.yaml's shell script (its args block),
// with the watched file at keys and the poll every 100 ms instead of 10 s.
func sidecarScript(t *testing.T, keys string) string {
	t.Helper()
	data, err := os.ReadFile("../../deploy/kubernetes/keys-reload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	block := yamlBlock(t, string(data), "- |")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "              "))
	}
	script := strings.Join(lines, "\n")
	for old, new := range map[string]string{"f=/etc/rankwire/keys/keys.json": "f=" + keys, "sleep 10;": "sleep 0.1;"} {
		if !strings.Contains(script, old) {
			t.Fatalf("keys-reload.yaml's script lacks %q:\n%s", old, script)
		}
		script = strings.Replace(script, old, new, 1)
	}
	return script
}

// TestKeysReloadSidecar runs keys-reload.yaml's script beside the gateway
// in a process namespace of their own (unshare, as the pod's shared one):
// when the key file is replaced the way the kubelet replaces a secret's
// (a rename), the script's pkill finds the gateway by name and its SIGHUP
// reloads the keys with the added tenant. pkill outside such a namespace
// would signal every process named gateway on the machine, so the test
// needs unshare (and root) or skips.
func TestKeysReloadSidecar(t *testing.T) {
	asUser(t, 0, 0) // root and util-linux, or skip
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare not found (util-linux)")
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	keyFileAt(t, keys)
	bin := filepath.Join(dir, "gateway") // pkill -x gateway matches the process's name
	installAt(t, bin)
	script := `"$GATEWAY" & ` + "\n" + sidecarScript(t, keys)
	p := startGatewayCmd(t, []string{unshare, "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", script},
		"GATEWAY="+bin, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir())

	src, err := os.ReadFile(keys)
	if err != nil {
		t.Fatal(err)
	}
	two := strings.Replace(string(src), `{"tenants":{`, `{"tenants":{"t2":{"keys":[{"kid":"k2","alg":"HS256","secret":"`+
		base64.StdEncoding.EncodeToString([]byte(strings.Repeat("2", 32)))+`"}]},`, 1)
	if err := os.WriteFile(keys+".new", []byte(two), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(keys+".new", keys); err != nil {
		t.Fatal(err)
	}
	reloaded := regexp.MustCompile(`msg="keys reloaded".* tenants=2\b`)
	await.For(t, 30*time.Second, func() error {
		if len(p.logged(reloaded)) == 0 {
			return fmt.Errorf("no reload with two tenants logged:\n%s", p.report())
		}
		return nil
	})
}
