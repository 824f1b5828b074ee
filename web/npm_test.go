package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// tool returns the path of a command the test needs: a failure where
// CI=true (CI installs it: .ci/run), a skip elsewhere, counted in the line
// TestMain prints.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found: CI must install the Debian package %s", name, pkg)
	}
	skipMissing(t, name, fmt.Sprintf("%s not found (apt-get install %s)", name, pkg))
	return ""
}

// TestDiffLogicWithNodeTestRunner runs testdata/diff.test.mjs with Node's
// own test runner: the client's snapshot and diff logic, a chain of diffs
// against a model, backoff and close codes.
func TestDiffLogicWithNodeTestRunner(t *testing.T) {
	node := tool(t, "node", "nodejs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--test", "testdata/diff.test.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatalf("node --test:\n%s", out)
	}
}

// TestNpmPack: the npm package (static/package.json) packs exactly the
// widget, the client, their type declarations, the styles, the README and
// the LICENSE (a copy of the repository's, checked by scripts' TestRelease),
// with the package's name and exports; nothing of the demo page.
func TestNpmPack(t *testing.T) {
	npm := tool(t, "npm", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "pack", "--dry-run", "--json", "--ignore-scripts")
	cmd.Dir = "static"
	cmd.Env = append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false", "npm_config_offline=true")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("npm pack --dry-run: %v\n%s", err, out)
	}
	var packs []struct {
		Name  string
		Files []struct{ Path string }
	}
	if err := json.Unmarshal(out, &packs); err != nil || len(packs) != 1 {
		t.Fatalf("npm pack output: %v\n%s", err, out)
	}
	var files []string
	for _, f := range packs[0].Files {
		files = append(files, f.Path)
	}
	slices.Sort(files)
	want := []string{"LICENSE", "README.md", "client.d.ts", "client.js", "package.json", "rankwire.d.ts", "rankwire.js", "styles.js"}
	if packs[0].Name != "@rankwire/widget" || !slices.Equal(files, want) {
		t.Fatalf("packed %s: %v, want %v", packs[0].Name, files, want)
	}
}

// TestTypesMatchExports: client.d.ts and rankwire.d.ts declare exactly
// what client.js and rankwire.js export.
func TestTypesMatchExports(t *testing.T) {
	exported := regexp.MustCompile(`(?m)^export (?:function|const|class) (\w+)`)
	declared := regexp.MustCompile(`(?m)^export (?:function|const|class) (\w+)`)
	for _, pair := range [][2]string{{"static/client.js", "static/client.d.ts"}, {"static/rankwire.js", "static/rankwire.d.ts"}} {
		js, err := os.ReadFile(pair[0])
		if err != nil {
			t.Fatal(err)
		}
		dts, err := os.ReadFile(pair[1])
		if err != nil {
			t.Fatal(err)
		}
		names := func(re *regexp.Regexp, src []byte) []string {
			var out []string
			for _, m := range re.FindAllSubmatch(src, -1) {
				if !slices.Contains(out, string(m[1])) {
					out = append(out, string(m[1]))
				}
			}
			slices.Sort(out)
			return out
		}
		if a, b := names(exported, js), names(declared, dts); !slices.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s exports %v, %s declares %v", pair[0], a, pair[1], b)
		}
	}
}
