package main

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	flags := gatewayFlags(t)
	flagRef := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	for _, path := range []string{"../../Dockerfile", "../../deploy/systemd/rankwire.service", "../../deploy/kubernetes/rankwire.yaml"} {
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
		if found < 3 {
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
