package scripts

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// allTargets are the platforms a release is built for.
var allTargets = []string{"linux/amd64", "linux/arm64", "darwin/arm64", "windows/amd64"}

// tool returns the path of a command the test needs: a failure where
// CI=true, a skip elsewhere.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found: CI must install it", name)
	}
	t.Skipf("%s not found", name)
	return ""
}

// latestVersion returns the newest version CHANGELOG.md has a section for.
func latestVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+[^\]]*)\] - \d{4}-\d{2}-\d{2}$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("CHANGELOG.md has no dated version section (## [0.9.0] - 2026-11-27)")
	}
	return string(m[1])
}

// testTargets returns the targets to build: all four with RELEASE_ALL=1,
// else only this machine's (linux/amd64 where it is none of them), so a
// test run compiles the gateway once.
func testTargets() []string {
	if os.Getenv("RELEASE_ALL") == "1" {
		return allTargets
	}
	if host := runtime.GOOS + "/" + runtime.GOARCH; slices.Contains(allTargets, host) {
		return []string{host}
	}
	return []string{"linux/amd64"}
}

// release runs release.sh version for targets into a temporary DIST and
// returns the version's directory and the script's output.
func release(t *testing.T, version string, targets []string) (string, []byte, error) {
	t.Helper()
	tool(t, "bash")
	dist := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	if deadline, ok := t.Deadline(); ok { // go test -timeout: stop the script in time to report
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-15*time.Second))
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "release.sh", version)
	cmd.Env = append(os.Environ(), "DIST="+dist, "TARGETS="+strings.Join(targets, " "), "RELEASE_ALLOW_DIRTY=1",
		"npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false", "npm_config_offline=true")
	out, err := cmd.CombinedOutput()
	return filepath.Join(dist, version), out, err
}

// binaryName is the file name release.sh gives target's binary.
func binaryName(version, target string) string {
	goos, arch, _ := strings.Cut(target, "/")
	name := "gateway_" + version + "_" + goos + "_" + arch
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// TestReleaseRefuses: a version that is not semver, or that CHANGELOG.md
// has no section for, is refused before anything is built.
func TestReleaseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, version, want string }{
		{"not semver", "1.2", "is not a semantic version"},
		{"not in the changelog", "99.0.0", `CHANGELOG.md has no section "## [99.0.0]"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, out, err := release(t, tc.version, []string{"linux/amd64"})
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("release.sh %s: %v, want a refusal saying %q:\n%s", tc.version, err, tc.want, out)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("release.sh %s wrote %s", tc.version, dir)
			}
		})
	}
}

// TestRelease runs release.sh for CHANGELOG.md's newest version (this
// machine's target; all four with RELEASE_ALL=1) and checks every artefact:
// the binaries (static, the host's printing the version), their SBOMs, the
// npm tarball, the container build context, the release notes and the
// checksums, then follows the README's install lines against it. It
// compiles the gateway (about two minutes on a cold build cache, seconds on
// a warm one), so -short skips it; RELEASE_ALL=1 compiles four targets
// (give it go test -timeout 30m).
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gateway and packs the npm package")
	}
	tool(t, "npm")
	version, targets := latestVersion(t), testTargets()
	start := time.Now()
	dir, out, err := release(t, version, targets)
	if err != nil {
		t.Fatalf("release.sh %s: %v\n%s", version, err, out)
	}
	t.Logf("release.sh %s for %v: %v", version, targets, time.Since(start).Round(time.Second))
	for _, target := range targets {
		checkBinary(t, filepath.Join(dir, binaryName(version, target)), version, target)
		checkSBOM(t, filepath.Join(dir, binaryName(version, target)+".cdx.json"), version)
	}
	checkNpm(t, filepath.Join(dir, "rankwire-widget-"+version+".tgz"), version)
	checkContainer(t, dir, version, targets)
	checkNotes(t, dir)
	checkSums(t, dir, len(targets))
	checkReadmeInstall(t, dir, version)
}

// checkBinary: the binary is of target's format and architecture; a Linux
// one is static (no program interpreter, no shared libraries); the host's
// runs and prints vVERSION.
func checkBinary(t *testing.T, path, version, target string) {
	t.Helper()
	goos, arch, _ := strings.Cut(target, "/")
	switch goos {
	case "linux":
		checkStaticELF(t, path, arch)
	case "darwin":
		f, err := macho.Open(path)
		if err != nil || (arch == "arm64") != (f.Cpu == macho.CpuArm64) {
			t.Errorf("%s: not a Mach-O binary for %s: %v", path, arch, err)
		}
	case "windows":
		f, err := pe.Open(path)
		if err != nil || (arch == "amd64") != (f.Machine == pe.IMAGE_FILE_MACHINE_AMD64) {
			t.Errorf("%s: not a PE binary for %s: %v", path, arch, err)
		}
	}
	if target != runtime.GOOS+"/"+runtime.GOARCH {
		return
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "rankwire gateway v"+version+" ") {
		t.Errorf("%s --version: %v %q, want rankwire gateway v%s", path, err, out, version)
	}
}

// checkStaticELF: path is an ELF binary for arch with no PT_INTERP (the
// dynamic loader a dynamically linked binary names) and no DT_NEEDED.
func checkStaticELF(t *testing.T, path, arch string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	defer f.Close()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != machine {
		t.Errorf("%s: machine %v, want %v", path, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (PT_INTERP)", path)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", path, libs)
	}
}

// checkSBOM: the SBOM is CycloneDX JSON for the gateway at vVERSION and
// names the nats-server module at the version go.mod requires.
func checkSBOM(t *testing.T, path, version string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name, Version string }
		}
		Components []struct{ Name, Version, Purl string }
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Version != "v"+version {
		t.Errorf("%s: %s for %+v, want CycloneDX for v%s", path, bom.BOMFormat, bom.Metadata.Component, version)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`github.com/nats-io/nats-server/v2 (v\S+)`).FindSubmatch(gomod)
	for _, c := range bom.Components {
		if c.Name == "github.com/nats-io/nats-server/v2" && want != nil && c.Version == string(want[1]) {
			return
		}
	}
	t.Errorf("%s names no github.com/nats-io/nats-server/v2 %s among %d components", path, want[1], len(bom.Components))
}

// tarFiles returns the regular files of the gzipped tar at path by name.
func tarFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
	}
}

// checkNpm: the tarball holds the repository's LICENSE and a package.json
// of @rankwire/widget at VERSION; the LICENSE in web/static (what npm packs
// from a checkout) is the repository's too.
func checkNpm(t *testing.T, path, version string) {
	t.Helper()
	files := tarFiles(t, path)
	license, err := os.ReadFile("../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["package/LICENSE"], license) {
		t.Errorf("%s: package/LICENSE is not the repository's LICENSE (%d bytes)", path, len(files["package/LICENSE"]))
	}
	var pkg struct{ Name, Version, License string }
	if err := json.Unmarshal(files["package/package.json"], &pkg); err != nil || pkg.Name != "@rankwire/widget" || pkg.Version != version {
		t.Errorf("%s: package.json %+v (%v), want @rankwire/widget %s", path, pkg, err, version)
	}
	for _, f := range []string{"package/rankwire.js", "package/client.js", "package/rankwire.d.ts", "package/README.md"} {
		if files[f] == nil {
			t.Errorf("%s lacks %s", path, f)
		}
	}
	if static, err := os.ReadFile("../web/static/LICENSE"); err != nil || !bytes.Equal(static, license) {
		t.Errorf("web/static/LICENSE is not a copy of LICENSE: %v", err)
	}
}

// checkContainer: container/ holds release.Dockerfile as Dockerfile, an
// empty data/ (copied to /data owned by 65532) and each Linux binary under
// the name the Dockerfile copies.
func checkContainer(t *testing.T, dir, version string, targets []string) {
	t.Helper()
	ctx := filepath.Join(dir, "container")
	got, err1 := os.ReadFile(filepath.Join(ctx, "Dockerfile"))
	want, err2 := os.ReadFile("release.Dockerfile")
	if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
		t.Errorf("container/Dockerfile is not release.Dockerfile: %v %v", err1, err2)
	}
	if entries, err := os.ReadDir(filepath.Join(ctx, "data")); err != nil || len(entries) != 0 {
		t.Errorf("container/data: %v, %d entries; want an empty directory", err, len(entries))
	}
	for _, target := range targets {
		goos, arch, _ := strings.Cut(target, "/")
		if goos != "linux" {
			continue
		}
		if a, b := fileSum(t, filepath.Join(ctx, "gateway_linux_"+arch)), fileSum(t, filepath.Join(dir, binaryName(version, target))); a != b {
			t.Errorf("container/gateway_linux_%s differs from %s", arch, binaryName(version, target))
		}
	}
}

// checkNotes: RELEASE_NOTES.md is the version's CHANGELOG section, without
// its heading or the next version's.
func checkNotes(t *testing.T, dir string) {
	t.Helper()
	notes, err := os.ReadFile(filepath.Join(dir, "RELEASE_NOTES.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(notes, []byte("### ")) || bytes.Contains(notes, []byte("## [")) || bytes.Contains(notes, []byte("]: https://")) {
		t.Errorf("RELEASE_NOTES.md is not one CHANGELOG section:\n%s", notes)
	}
}

// fileSum returns the hex SHA-256 of path.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkSums: SHA256SUMS lists every file beside it (binaries, SBOMs, the
// tarball, LICENSE, NOTICE, the notes), each with its right checksum.
func checkSums(t *testing.T, dir string, binaries int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || fileSum(t, filepath.Join(dir, name)) != sum {
			t.Errorf("SHA256SUMS: %q does not match the file", sc.Text())
		}
		listed[name] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && e.Name() != "SHA256SUMS" && !listed[e.Name()] {
			t.Errorf("SHA256SUMS does not list %s", e.Name())
		}
	}
	if want := 2*binaries + 4; len(listed) != want {
		t.Errorf("SHA256SUMS lists %d files, want %d", len(listed), want)
	}
}

// readmeInstall returns the README's lines that install the gateway from a
// release: the first sh block of its "## Install" section.
func readmeInstall(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n## Install\n")
	_, block, ok2 := strings.Cut(after, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no sh block under ## Install")
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// checkReadmeInstall runs the README's install lines against the release
// in dir as if it were published: the download URL becomes dir, the
// installed path a temporary bin, V and T this release's version and the
// host's target; the installed gateway must print the version.
func checkReadmeInstall(t *testing.T, dir, version string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Log("the README's install lines were not run: they check with sha256sum, on Linux")
		return
	}
	bin := t.TempDir()
	rewrites := []struct{ re, to string }{
		{`^V=\S+ T=\S+`, "V=" + version + " T=" + runtime.GOOS + "_" + runtime.GOARCH},
		{`curl -fLO https://github.com/rankwire/rankwire/releases/download/v\$V/`, `cp ` + dir + `/`},
		{`(\S+)$`, "$1 ."}, // cp's destination, on the cp lines only (below)
		{`sudo install (.*) /usr/local/bin/gateway`, "install $1 " + bin + "/gateway"},
		{`^gateway `, bin + "/gateway "},
	}
	var script []string
	for _, line := range readmeInstall(t) {
		line, _, _ = strings.Cut(line, "  #") // comments
		for i, r := range rewrites {
			if i == 2 && !strings.HasPrefix(line, "cp ") {
				continue
			}
			line = regexp.MustCompile(r.re).ReplaceAllString(strings.TrimSpace(line), r.to)
		}
		script = append(script, line)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rankwire gateway v"+version+" ") {
		t.Errorf("the README's install lines, run as\n%s\n: %v\n%s", strings.Join(script, "\n"), err, out)
	}
}
