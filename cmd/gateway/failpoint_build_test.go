package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// failpointPkg is the package of the test build's hooks.
const failpointPkg = "github.com/rankwire/rankwire/internal/failpoint"

// TestFailpointsOnlyInTaggedBuild proves that the default build holds no
// fault-injection hook: built without -tags rankwire_failpoints, package
// failpoint compiles only its empty stubs (off.go), the gateway binary
// holds no symbol of the package (the stubs are inlined away) and not the
// names of the environment variables that arm the hooks, so no
// environment can reach one. The tagged binary, the control, holds all
// three.
func TestFailpointsOnlyInTaggedBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the gateway twice")
	}
	for tags, want := range map[string]string{"": "doc.go off.go", "rankwire_failpoints": "doc.go on.go"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", "{{join .GoFiles \" \"}}", failpointPkg).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Fatalf("go list -tags %q %s: %q (%v), want %q", tags, failpointPkg, out, err, want)
		}
	}
	for bin, armed := range map[string]bool{builtGateway(t): false, failpointGateway(t): true} {
		out, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		symbols := strings.Count(string(out), " "+failpointPkg+".")
		hasHook := strings.Contains(string(out), " "+failpointPkg+".AfterApply\n")
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		names := bytes.Contains(data, []byte("RANKWIRE_FAILPOINT_DIVERGE")) || bytes.Contains(data, []byte("RANKWIRE_FAILPOINT_HOLD_REBUILD"))
		if armed != (symbols > 0) || armed != hasHook || armed != names {
			t.Fatalf("%s (tagged %v): %d symbols of %s (AfterApply: %v), the variables' names: %v", bin, armed, symbols, failpointPkg, hasHook, names)
		}
	}
	// The tagged package's own tests (its parsing of the variables) run
	// nowhere else: the README's test command builds without the tag.
	if out, err := exec.Command("go", "test", "-count=1", "-tags", "rankwire_failpoints", failpointPkg).CombinedOutput(); err != nil {
		t.Fatalf("go test -tags rankwire_failpoints %s: %v\n%s", failpointPkg, err, out)
	}
}
