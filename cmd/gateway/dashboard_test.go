package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardPickers: the Grafana dashboard has instance and tenant
// variables from label_values queries, every query of a rankwire metric is
// filtered by instance, those of a per-tenant metric by tenant too, and the
// warning metrics have panels.
func TestDashboardPickers(t *testing.T) {
	data, err := os.ReadFile("../../deploy/grafana/rankwire.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Name, Type, Definition string
			}
		}
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Definition
	}
	for _, name := range []string{"instance", "tenant"} {
		if !strings.HasPrefix(vars[name], "label_values(") || !strings.HasSuffix(vars[name], ", "+name+")") {
			t.Errorf("variable %s: %q, want a label_values query of its label", name, vars[name])
		}
	}
	tenanted := regexp.MustCompile(`rankwire_(board_members|applied_sequence|apply_lag_seconds|tenant_[a-z_]+|quarantine_pending|snapshot_age_seconds|webhook_backlog)\b`)
	ref := regexp.MustCompile(`rankwire_[a-z_]+(\{[^}]*\})?`)
	seen := ""
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			seen += tg.Expr + "\n"
			for _, m := range ref.FindAllStringSubmatch(tg.Expr, -1) {
				if !strings.Contains(m[1], `instance=~"$instance"`) {
					t.Errorf("panel %q: %s not filtered by instance", p.Title, m[0])
				}
				if tenanted.MatchString(m[0]) && !strings.Contains(m[1], `tenant=~"$tenant"`) {
					t.Errorf("panel %q: %s not filtered by tenant", p.Title, m[0])
				}
			}
		}
	}
	for _, want := range []string{"rankwire_store_used_bytes", "rankwire_store_limit_bytes", "rankwire_quarantine_pending", "rankwire_snapshot_age_seconds", "rankwire_webhook_backlog", `up{job="rankwire"`} {
		if !strings.Contains(seen, want) {
			t.Errorf("no panel queries %s", want)
		}
	}
}

// TestAlertRules: promtool checks the alert rules and runs their unit
// tests (deploy/prometheus/alerts_test.yml: each warning fires on the
// series that should raise it, and not on another tenant's). Skipped where
// promtool is not installed (Debian: the prometheus package).
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatal("promtool not installed (apt-get install prometheus): CI must check the alert rules")
	}
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../deploy/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
