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
	// stderr is no terminal here: no progress bar's \r frames in a log.
	if code != 0 || !strings.Contains(out, "read 2500, applied 2500") || errOut != "" {
		t.Fatalf("CSV import: %d %q %q: want the summary and a quiet stderr", code, out, errOut)
	}
	if out, _, code = imp(csvFile); code != 0 || !strings.Contains(out, "applied 0") || !strings.Contains(out, "duplicates 2500") {
		t.Fatalf("the same import again: %d %q", code, out)
	}
	if out, _, code = imp(jsonl); code != 0 || !strings.Contains(out, "read 2, applied 2") {
		t.Fatalf("JSON lines: %d %q", code, out)
	}
	for _, tc := range []struct{ body, want string }{
		{"member,score\np1,abc\n", "line 2: score (column 2): \"abc\" is not a decimal number"},
		{"name,score\n", "no member column"},
		{"member,score\n,5\n", "line 2: member (column 1): empty"},
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

// importer runs gateway import against url with tok on board.
func importer(t *testing.T, url, tok, board string) func(args ...string) (string, string, int) {
	return func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := runImport(context.Background(), append([]string{"--url", url, "--token", tok, "--board", board}, args...), &out, &errOut)
		return out.String(), errOut.String(), code
	}
}

// withStdin runs f with standard input reading path.
func withStdin(t *testing.T, path string, f func()) {
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	f()
}

// The ids of lines without one derive from the file's content and the
// line's number, not from the path as typed: the same file imported as
// ./f, by its absolute path, through standard input and saved with CRLF
// line ends applies once on a sum board (two equal lines are two
// submissions); another file with the same first lines is another import.
func TestImportIdempotentWhateverThePath(t *testing.T) {
	url, tok := runGateway(t)
	c, _ := client.New([]string{url}, client.WithToken(tok))
	ctx := context.Background()
	if _, err := c.PutBoard(ctx, "sum", client.Settings{Policy: "sum"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	body := "member,score\nann,5\nann,5\nbob,1\n"
	os.WriteFile(filepath.Join(dir, "f.csv"), []byte(body), 0o600)
	os.WriteFile(filepath.Join(dir, "crlf.csv"), []byte(strings.ReplaceAll(body, "\n", "\r\n")), 0o600)
	os.WriteFile(filepath.Join(dir, "grown.csv"), []byte(body+"cy,2\n"), 0o600)
	t.Chdir(dir)
	imp := importer(t, url, tok, "sum")
	ann := func() float64 {
		r, err := c.Member(ctx, "sum", "ann", client.Window{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Score
	}
	if out, errOut, code := imp("./f.csv"); code != 0 || !strings.Contains(out, "read 3, applied 3") || ann() != 10 {
		t.Fatalf("the first import: %d %q %q, ann %v", code, out, errOut, ann())
	}
	again := map[string]func() (string, string, int){
		"an absolute path": func() (string, string, int) { return imp(filepath.Join(dir, "f.csv")) },
		"another relative": func() (string, string, int) { return imp("f.csv") },
		"standard input": func() (out, errOut string, code int) {
			withStdin(t, filepath.Join(dir, "f.csv"), func() { out, errOut, code = imp("-") })
			return
		},
		"CRLF line ends": func() (string, string, int) { return imp("crlf.csv") },
	}
	for name, run := range again {
		if out, errOut, code := run(); code != 0 || !strings.Contains(out, "applied 0") || !strings.Contains(out, "duplicates 3") {
			t.Errorf("%s: %d %q %q", name, code, out, errOut)
		}
		if got := ann(); got != 10 {
			t.Fatalf("after %s ann has %v, want 10", name, got)
		}
	}
	if out, _, code := imp("grown.csv"); code != 0 || !strings.Contains(out, "applied 4") || ann() != 20 {
		t.Fatalf("another file: %d %q, ann %v", code, out, ann())
	}
}

// Every line is checked with the gateway's rules before anything is sent:
// a bad line 4,501 stops the import with nothing applied, and the error
// names the line and the field (and its column in CSV). Numbers must be
// written in decimal: the forms strconv.ParseFloat also reads are refused.
// A UTF-8 BOM before the header is not part of it.
func TestImportChecksEveryLineFirst(t *testing.T) {
	url, tok := runGateway(t)
	c, _ := client.New([]string{url}, client.WithToken(tok))
	ctx := context.Background()
	if _, err := c.PutBoard(ctx, "cup", client.Settings{}); err != nil {
		t.Fatal(err)
	}
	imp := importer(t, url, tok, "cup")
	dir := t.TempDir()
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	var b strings.Builder
	b.WriteString("id,member,score\n")
	for i := 2; i < 4501; i++ {
		fmt.Fprintf(&b, ",p%d,%d\n", i, i)
	}
	fmt.Fprintf(&b, ",%s,1\n", strings.Repeat("x", 129))
	for i := range 10 {
		fmt.Fprintf(&b, ",q%d,1\n", i)
	}
	long := strings.Repeat("i", 129)
	for _, tc := range []struct{ name, body, want string }{
		{"line 4501 of many", b.String(), "line 4501: member (column 2): longer than 128 bytes"},
		{"hexadecimal", "member,score\na,0x1p10\n", `line 2: score (column 2): "0x1p10" is not a decimal number`},
		{"underscores", "member,score\na,1_000\n", `"1_000" is not a decimal number`},
		{"binary", "member,score\na,0b1\n", `"0b1" is not a decimal number`},
		{"Inf", "member,score\na,Inf\n", `"Inf" is not a decimal number`},
		{"infinity", "member,score\na,-infinity\n", `"-infinity" is not a decimal number`},
		{"NaN", "member,score,subscore\na,1,NaN\n", `line 2: subscore (column 3): "NaN" is not a decimal number`},
		{"past float64", "member,score\na,1e400\n", `"1e400" is out of range`},
		{"empty score", "member,score\na,\n", `line 2: score (column 2): "" is not a decimal number`},
		{"a control character", "member,score\n\"a\x01b\",1\n", "line 2: member (column 1): holds a control character"},
		{"invalid UTF-8", "member,score\na\xffb,1\n", "line 2: member (column 1): invalid UTF-8"},
		{"a long id", "member,score,id\na,1," + long + "\n", "line 2: id (column 3): 129 bytes, at most 128"},
		{"after a quoted line break", "member,score,note\na,1,\"x\ny\"\nc,x,\n", "line 4: score (column 2)"},
		{"two score columns", "member,score,score\na,1,2\n", `line 1 (column 3): the column "score" is named twice`},
		{"JSON: a string score", "{\"member\":\"a\",\"score\":\"5\"}\n", `line 1: score: "\"5\"" is not a decimal number`},
		{"JSON: no score", "\n{\"member\":\"a\"}\n", "line 2: score: required"},
		{"JSON: member not a string", "{\"member\":5,\"score\":1}\n", "line 1: member: 5 is not a string"},
		{"JSON: unknown field", "{\"member\":\"a\",\"score\":1,\"scor\":2}\n", "line 1: scor: unknown field"},
		{"JSON: not an object", "[1,2]\n", "line 1: not a JSON object"},
		{"JSON: invalid UTF-8", "{\"member\":\"a\xff\",\"score\":1}\n", "line 1: invalid UTF-8"},
		{"JSON: a huge number", "{\"member\":\"a\",\"score\":1e999}\n", `line 1: score: "1e999" is out of range`},
	} {
		name := "bad.csv"
		if strings.HasPrefix(tc.name, "JSON") {
			name = "bad.jsonl"
		}
		if _, errOut, code := imp(write(name, tc.body)); code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "float64") {
			t.Errorf("%s: %d %q, want %q", tc.name, code, errOut, tc.want)
		}
	}
	if p, _ := c.Top(ctx, "cup", client.ReadOptions{Limit: 1}); p.Total != 0 {
		t.Fatalf("after the bad files the board holds %d", p.Total)
	}
	if out, errOut, code := imp(write("bom.csv", "\ufeffmember,score\nann,+1.5e1\nbob,.5\n")); code != 0 || !strings.Contains(out, "applied 2") {
		t.Fatalf("a BOM before the header: %d %q %q", code, out, errOut)
	}
	if r, err := c.Member(ctx, "cup", "ann", client.Window{}); err != nil || r.Score != 15 {
		t.Fatalf("ann: %+v %v", r, err)
	}
}
