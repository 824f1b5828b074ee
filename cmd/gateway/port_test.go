package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/client"
)

// runGateway runs the gateway in-process on a key file and returns its
// base URL and an admin token; it stops at cleanup.
func runGateway(t *testing.T) (string, string) {
	t.Helper()
	keys, sk := keyFile(t)
	cfg, err := parseConfig([]string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--keys", keys, "--metrics-addr", ""}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, errc := make(chan string, 1), make(chan error, 1)
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, ready) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			<-errc
		})
		return "http://" + addr, adminToken(t, sk)
	case err := <-errc:
		cancel()
		t.Fatal(err)
	}
	return "", ""
}

// gateway import submits a CSV and a JSON-lines file with ids made for
// lines that have none, so a second run applies nothing; a bad line stops
// it before anything is sent; gateway export writes the standings as CSV.
func TestImportExport(t *testing.T) {
	url, tok := runGateway(t)
	c, _ := client.New([]string{url}, client.WithToken(tok))
	ctx := context.Background()
	if _, err := c.PutBoard(ctx, "cup", client.Settings{Prizes: []client.Prize{{From: 1, To: 2, Prize: "€5"}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("member,score,subscore,id\n")
	for i := range 2500 {
		fmt.Fprintf(&b, "p%d,%d,0,\n", i, i)
	}
	csvFile := filepath.Join(dir, "scores.csv")
	os.WriteFile(csvFile, []byte(b.String()), 0o600)
	jsonl := filepath.Join(dir, "more.jsonl")
	os.WriteFile(jsonl, []byte(`{"member":"top","score":99999,"id":"t-1"}`+"\n\n"+`{"member":"p1","score":5000}`+"\n"), 0o600)

	imp := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := runImport(ctx, append([]string{"--url", url, "--token", tok, "--board", "cup"}, args...), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	out, errOut, code := imp(csvFile)
	if code != 0 || !strings.Contains(out, "read 2500, applied 2500") || !strings.Contains(errOut, "2500/2500") {
		t.Fatalf("CSV import: %d %q %q", code, out, errOut)
	}
	if out, _, code = imp(csvFile); code != 0 || !strings.Contains(out, "applied 0") || !strings.Contains(out, "duplicates 2500") {
		t.Fatalf("the same import again: %d %q", code, out)
	}
	if out, _, code = imp(jsonl); code != 0 || !strings.Contains(out, "read 2, applied 2") {
		t.Fatalf("JSON lines: %d %q", code, out)
	}
	for _, tc := range []struct{ body, want string }{
		{"member,score\np1,abc\n", "line 2: score: \"abc\" is not a finite number"},
		{"name,score\n", "no member column"},
		{"member,score\n,5\n", "line 2: member: empty"},
	} {
		f := filepath.Join(dir, "bad.csv")
		os.WriteFile(f, []byte(tc.body), 0o600)
		if _, errOut, code := imp(f); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: %d %q, want %q", tc.body, code, errOut, tc.want)
		}
	}
	f := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(f, []byte(`{"member":"a","score":1}`+"\n"+`{"member":"b","scor":2}`+"\n"), 0o600)
	if _, errOut, code := imp(f); code != 2 || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "scor") {
		t.Errorf("a misspelt field: %d %q", code, errOut)
	}
	if p, _ := c.Top(ctx, "cup", client.ReadOptions{Limit: 1}); p.Total != 2501 {
		t.Fatalf("after the bad files the board holds %d", p.Total)
	}

	var exp, expErr strings.Builder
	if code := runExport(ctx, []string{"--url", url, "--token", tok, "--board", "cup"}, &exp, &expErr); code != 0 {
		t.Fatalf("export: %d %s", code, expErr.String())
	}
	rows, err := csv.NewReader(strings.NewReader(exp.String())).ReadAll()
	if err != nil || len(rows) != 2502 || strings.Join(rows[0], ",") != "rank,member,name,score,subscore,prize" ||
		strings.Join(rows[1], ",") != "1,top,,99999,0,€5" || strings.Join(rows[2], ",") != "2,p1,,5000,0,€5" || rows[3][5] != "" {
		t.Fatalf("export: %d rows %v %v", len(rows), rows[:min(4, len(rows))], err)
	}
	if !strings.Contains(expErr.String(), "exported 2501 rows of cup (not final") {
		t.Fatalf("export summary: %q", expErr.String())
	}
	exp.Reset()
	if code := runExport(ctx, []string{"--url", url, "--token", tok, "--board", "cup", "--limit", "3"}, &exp, io.Discard); code != 0 || strings.Count(exp.String(), "\n") != 4 {
		t.Fatalf("export --limit 3: %q", exp.String())
	}
	if code := runExport(ctx, []string{"--url", url, "--token", tok, "--board", "nope"}, io.Discard, &expErr); code != 1 || !strings.Contains(expErr.String(), "not_found") {
		t.Fatalf("an unknown board: %d %q", code, expErr.String())
	}
	if code := runExport(ctx, []string{"--url", url, "--board", "cup"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("no token: %d", code)
	}
}

func TestSpreadsheetSafe(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+1": "'+1", "-2+3": "'-2+3", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx",
		"": "", "ann": "ann", "a=1": "a=1", "'quoted": "'quoted", "€5": "€5",
	} {
		if got := spreadsheetSafe(in); got != want {
			t.Errorf("spreadsheetSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// gateway export neutralises member ids, player names and prize labels
// that a spreadsheet would evaluate (each of = + - @), never a number: a
// score -2 stays -2, a member id -2 (text) becomes '-2; --raw writes
// them as they are.
func TestExportNeutralisesFormulas(t *testing.T) {
	url, tok := runGateway(t)
	c, _ := client.New([]string{url}, client.WithToken(tok))
	ctx := context.Background()
	prizes := []client.Prize{{From: 1, To: 1, Prize: "=1+1"}, {From: 2, To: 2, Prize: "+1"}, {From: 3, To: 3, Prize: "-1 EUR"}, {From: 4, To: 4, Prize: "@x"}}
	if _, err := c.PutBoard(ctx, "inj", client.Settings{Prizes: prizes}); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		member, name string
		score        float64
	}{
		{`=HYPERLINK("http://evil")`, `=cmd|' /C calc'!A0`, 5},
		{"+1+1", "+name", 4},
		{"-2+3", "-name", 3},
		{"@SUM(A1)", "@name", 2},
		{"-2", "", -2},
	}
	for _, r := range rows {
		if _, err := c.Submit(ctx, "inj", client.Score{Member: r.member, Score: r.score, Subscore: -r.score}); err != nil {
			t.Fatal(err)
		}
		if r.name != "" {
			if _, err := c.PutProfile(ctx, r.member, client.Profile{Name: r.name}); err != nil {
				t.Fatal(err)
			}
		}
	}
	export := func(args ...string) []string {
		var out, errOut strings.Builder
		if code := runExport(ctx, append([]string{"--url", url, "--token", tok, "--board", "inj"}, args...), &out, &errOut); code != 0 {
			t.Fatalf("export %v: %d %s", args, code, errOut.String())
		}
		recs, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, r := range recs[1:] {
			lines = append(lines, strings.Join(r, ","))
		}
		return lines
	}
	want := []string{
		`1,'=HYPERLINK("http://evil"),'=cmd|' /C calc'!A0,5,-5,'=1+1`,
		"2,'+1+1,'+name,4,-4,'+1",
		"3,'-2+3,'-name,3,-3,'-1 EUR",
		"4,'@SUM(A1),'@name,2,-2,'@x",
		"5,'-2,,-2,2,",
	}
	if got := export(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("export:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantRaw := []string{
		`1,=HYPERLINK("http://evil"),=cmd|' /C calc'!A0,5,-5,=1+1`,
		"2,+1+1,+name,4,-4,+1",
		"3,-2+3,-name,3,-3,-1 EUR",
		"4,@SUM(A1),@name,2,-2,@x",
		"5,-2,,-2,2,",
	}
	if got := export("--raw"); strings.Join(got, "\n") != strings.Join(wantRaw, "\n") {
		t.Fatalf("export --raw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantRaw, "\n"))
	}
}
