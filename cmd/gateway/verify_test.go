package main

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// `gateway verify` on the data directory of a stopped gateway replays
// every tenant and finds the snapshot written at shutdown equal (exit 0);
// on the directory of a running gateway it refuses (exit 2), since two
// processes must not open one JetStream store.
func TestVerifyCommand(t *testing.T) {
	keys, sk := keyFile(t)
	tok := adminToken(t, sk)
	dir := t.TempDir()
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+dir)
	if status, err := call("PUT", p.url("/v1/boards/b"), tok, `{}`, nil); status != 200 {
		t.Fatalf("create board: %d %v", status, err)
	}
	for i := range 20 {
		body := fmt.Sprintf(`{"member":"p%d","score":%d,"id":"s%d"}`, i%7, i, i)
		if status, err := call("POST", p.url("/v1/boards/b/scores"), tok, body, nil); status != 200 {
			t.Fatalf("submit: %d %v", status, err)
		}
	}
	bin := builtGateway(t)
	out, err := exec.Command(bin, "verify", "--data", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "stop the gateway") {
		t.Fatalf("verify beside a running gateway: %v\n%s", err, out)
	}
	stop(t, p)
	out, err = exec.Command(bin, "verify", "--data", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	for _, want := range []string{"tenant t1: 21 events replayed", "state at seq 21: sha256:", "equal to the replay",
		"every snapshot follows from the stream"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("verify's report lacks %q:\n%s", want, out)
		}
	}
}
