package main

import (
	"strings"
	"testing"
)

// TestHelp: `gateway help`, `--help` and `-h` succeed and list serving and
// every subcommand with its usage line, then the flags of serving; a word
// that is no subcommand fails with a pointer to help.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		var stdout, stderr strings.Builder
		if status := dispatch(args, &stdout, &stderr); status != 0 {
			t.Fatalf("gateway %s: exit %d, stderr %q", args[0], status, stderr.String())
		}
		out := stdout.String()
		for _, want := range []string{
			"gateway [flags]\n",
			"gateway keygen --out FILE --tenant NAME",
			"gateway token --keys FILE --kid KID",
			"gateway import --board BOARD",
			"gateway export --board BOARD",
			"gateway verify [--data DIR",
			"gateway backup --out DIR",
			"gateway restore --from BACKUP",
			"gateway version\n        print the version",
			"gateway help\n",
			"  -push-interval", "RANKWIRE_PUSH_INTERVAL",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("gateway %s lacks %q:\n%s", args[0], want, out)
			}
		}
	}
	var stdout, stderr strings.Builder
	if status := dispatch([]string{"tokn"}, &stdout, &stderr); status != 2 || !strings.Contains(stderr.String(), "gateway help lists them") {
		t.Errorf("gateway tokn: exit %d, stderr %q; want 2 and a pointer to help", status, stderr.String())
	}
}

// TestVersion: `gateway version` and `--version` print the version.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var stdout strings.Builder
		if status := dispatch([]string{arg}, &stdout, &stdout); status != 0 || strings.TrimSpace(stdout.String()) != versionString() {
			t.Errorf("gateway %s: exit %d, %q", arg, status, stdout.String())
		}
	}
}
