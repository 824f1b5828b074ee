package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
)

// `gateway import` and `gateway export` move scores in and standings out
// through a running gateway's API (package client), so that they work
// against any node of a deployment and obey its tokens and limits.

// portFlags are the flags import and export share.
type portFlags struct {
	url, token, board string
}

func (p *portFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.url, "url", "http://127.0.0.1:8080", "the gateway's base `URL`s, comma-separated (the next is tried where one is down)")
	fs.StringVar(&p.token, "token", "", "a `token` of the tenant (import: role submit; export: read); default $RANKWIRE_TOKEN")
	fs.StringVar(&p.board, "board", "", "the `board` (required)")
}

func (p *portFlags) client() (*client.Client, error) {
	if p.token == "" {
		p.token = os.Getenv("RANKWIRE_TOKEN")
	}
	switch {
	case p.board == "":
		return nil, errors.New("--board: required")
	case p.token == "":
		return nil, errors.New("--token: required (or set RANKWIRE_TOKEN)")
	}
	c, err := client.New(splitList(p.url), client.WithToken(p.token))
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	return c, nil
}

// runExport writes a board's standings as CSV to stdout: rank, member,
// name, score, subscore, prize; the first line names the columns. The text
// columns are neutralised for spreadsheets (see spreadsheetSafe) unless
// --raw. Exit 0 written, 1 the gateway refused or failed, 2 bad arguments.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gateway export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p portFlags
	p.register(fs)
	limit := fs.Int("limit", 0, "export at most this many `rows` from the top; 0: all")
	raw := fs.Bool("raw", false, "write member ids, names and prizes as they are, for programs: no quote before a leading = + - @ tab or CR")
	if err := fs.Parse(args); err != nil {
		return exitFor(err)
	}
	c, err := p.client()
	if err != nil {
		fmt.Fprintln(stderr, "gateway export:", err)
		return 2
	}
	text := spreadsheetSafe
	if *raw {
		text = func(s string) string { return s }
	}
	w := csv.NewWriter(stdout)
	_ = w.Write([]string{"rank", "member", "name", "score", "subscore", "prize"})
	const page = 1000
	n := 0
	var st client.Standings
	for {
		size := page
		if *limit > 0 {
			size = min(page, *limit-n)
		}
		if size <= 0 {
			break
		}
		if st, err = c.Standings(ctx, p.board, n, size); err != nil {
			fmt.Fprintln(stderr, "gateway export:", err)
			return 1
		}
		for _, r := range st.Rows {
			_ = w.Write([]string{strconv.Itoa(r.Rank), text(r.Member), text(r.Name), fmtFloat(r.Score), fmtFloat(r.Subscore), text(r.Prize)})
		}
		n += len(st.Rows)
		if len(st.Rows) < size {
			break
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fmt.Fprintln(stderr, "gateway export:", err)
		return 1
	}
	state := "not final: the board is open, or ended less than 65 s ago"
	if st.Final {
		state = "final"
	}
	fmt.Fprintf(stderr, "exported %d rows of %s (%s, seq %d)\n", n, p.board, state, st.Seq)
	return 0
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// spreadsheetSafe returns a text cell that a spreadsheet will show rather
// than evaluate: one starting with =, +, -, @, tab or carriage return (a
// formula, or DDE such as =cmd|' /C calc'!A0) gets a leading single quote,
// as OWASP's CSV injection rule says. A member id or a player's name is the
// tenant's players' own text, and the file is opened by the operator's
// staff. Numeric columns (rank, score, subscore) are written by the
// exporter from numbers, so a score -2 stays -2; a member id -2+3 becomes
// '-2+3.
func spreadsheetSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// importSummary counts what an import's submissions did.
type importSummary struct {
	read, applied, kept, duplicate, quarantined int
}

// runImport submits a file of scores (CSV with a header naming member,
// score and optionally subscore and id; or JSON lines of
// {"member","score","subscore","id"}) in batches of 1,000. A line without
// an id gets one made of the file's content and the line's number (see
// lineID), so that importing the same file again, by any path or from
// standard input, applies nothing twice. Every line is checked with the
// gateway's own rules before anything is sent: a bad line stops the import
// with nothing applied, naming the line and field. A batch refused as
// unavailable or rate limited is retried (the same ids).
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gateway import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p portFlags
	p.register(fs)
	format := fs.String("format", "", "`csv` or `jsonl`; default: by the file's extension")
	if err := fs.Parse(args); err != nil {
		return exitFor(err)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "gateway import: want one FILE (or - for standard input)")
		return 2
	}
	c, err := p.client()
	if err != nil {
		fmt.Fprintln(stderr, "gateway import:", err)
		return 2
	}
	path := fs.Arg(0)
	data, err := readInput(path)
	if err != nil {
		fmt.Fprintln(stderr, "gateway import:", err)
		return 2
	}
	if *format == "" {
		*format = "csv"
		if strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".ndjson") || strings.HasSuffix(path, ".json") {
			*format = "jsonl"
		}
	}
	scores, err := readScores(data, *format, path)
	if err != nil {
		fmt.Fprintln(stderr, "gateway import:", err)
		return 2
	}
	sum := importSummary{read: len(scores)}
	start := time.Now()
	for i := 0; i < len(scores); i += client.MaxBatch {
		batch := scores[i:min(i+client.MaxBatch, len(scores))]
		res, err := submitRetrying(ctx, c, p.board, batch)
		if err != nil {
			fmt.Fprintf(stderr, "\ngateway import: lines of batch %d (items %d..%d): %v\n", i/client.MaxBatch+1, i+1, i+len(batch), err)
			sum.report(stdout, time.Since(start))
			return 1
		}
		for _, r := range res {
			switch {
			case r.Duplicate:
				sum.duplicate++
			case r.Reason != "":
				sum.quarantined++
			case r.Applied:
				sum.applied++
			default:
				sum.kept++
			}
		}
		done := i + len(batch)
		fmt.Fprintf(stderr, "\r%s %d/%d", progressBar(done, len(scores)), done, len(scores))
	}
	fmt.Fprintln(stderr)
	sum.report(stdout, time.Since(start))
	return 0
}

func (s importSummary) report(w io.Writer, took time.Duration) {
	fmt.Fprintf(w, "read %d, applied %d, kept as they were %d, duplicates %d, quarantined %d, in %v\n",
		s.read, s.applied, s.kept, s.duplicate, s.quarantined, took.Round(time.Millisecond))
}

// progressBar draws done of total in 30 cells.
func progressBar(done, total int) string {
	const cells = 30
	n := cells
	if total > 0 {
		n = cells * done / total
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", cells-n) + "]"
}

// submitRetrying submits batch, retrying for up to a minute while the
// gateway answers unavailable or rate limited: the items' ids make a retry
// apply once.
func submitRetrying(ctx context.Context, c *client.Client, board string, batch []client.Score) ([]client.Result, error) {
	deadline := time.Now().Add(time.Minute)
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		res, err := c.Submit(ctx, board, batch...)
		if err == nil || !(client.IsCode(err, "unavailable") || client.IsCode(err, "rate_limited")) || time.Now().After(deadline) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// utf8BOM is the byte order mark some programs (Excel's "CSV UTF-8") write
// first; it is not part of the header.
var utf8BOM = []byte("\xef\xbb\xbf")

// readInput reads the file at path, or standard input for "-", whole: the
// lines' ids derive from the whole content, and every line is checked
// before anything is sent.
func readInput(path string) ([]byte, error) {
	if path != "-" {
		return os.ReadFile(path)
	}
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	return data, nil
}

// fileLine is one line's submission and its line number in the file.
type fileLine struct {
	line  int
	score client.Score
}

// lineError is a line of the file that the gateway would refuse, or that
// does not parse: it names the line, the field and, in CSV, its column.
type lineError struct {
	line   int
	column int    // 1-based; 0 where the format has no columns
	field  string // "" where the whole line is at fault
	err    error
}

func (e *lineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "line %d", e.line)
	if e.field != "" {
		b.WriteString(": " + e.field)
	}
	if e.column > 0 {
		fmt.Fprintf(&b, " (column %d)", e.column)
	}
	return b.String() + ": " + e.err.Error()
}

func (e *lineError) Unwrap() error { return e.err }

// readScores parses data (a UTF-8 BOM before the header is dropped) in
// format and checks every line with the gateway's rules; name is the file's
// name in messages. Lines without an id get lineID's.
func readScores(data []byte, format, name string) ([]client.Score, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	var lines []fileLine
	var err error
	switch format {
	case "csv":
		lines, err = readCSV(data)
	case "jsonl":
		lines, err = readJSONL(data)
	default:
		return nil, fmt.Errorf("--format %q: want csv or jsonl", format)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	digest := contentDigest(data)
	out := make([]client.Score, len(lines))
	for i, l := range lines {
		if l.score.ID == "" {
			l.score.ID = lineID(digest, l.line)
		}
		out[i] = l.score
	}
	return out, nil
}

func readCSV(data []byte) ([]fileLine, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, &lineError{line: 1, err: fmt.Errorf("a header naming member and score: %w", err)}
	}
	col, err := csvColumns(header)
	if err != nil {
		return nil, err
	}
	var out []fileLine
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err // a *csv.ParseError: it names the line and column
		}
		l, err := csvLine(r, rec, col)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
}

// csvColumns maps the header's column names to their indexes. member and
// score are required, subscore and id optional; other columns (an export's
// rank, name and prize) are ignored; a name given twice is ambiguous.
func csvColumns(header []string) (map[string]int, error) {
	col := map[string]int{}
	for i, h := range header {
		k := strings.ToLower(strings.TrimSpace(h))
		if _, dup := col[k]; dup && k != "" {
			return nil, &lineError{line: 1, column: i + 1, err: fmt.Errorf("the column %q is named twice", k)}
		}
		col[k] = i
	}
	for _, k := range []string{"member", "score"} {
		if _, ok := col[k]; !ok {
			return nil, &lineError{line: 1, err: fmt.Errorf("no %s column in the header %q", k, header)}
		}
	}
	return col, nil
}

// csvLine parses and checks one record; its line is where it starts (a
// quoted field may hold line breaks).
func csvLine(r *csv.Reader, rec []string, col map[string]int) (fileLine, error) {
	line, _ := r.FieldPos(0)
	get := func(k string) string {
		if i, ok := col[k]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	fail := func(k string, err error) (fileLine, error) {
		return fileLine{}, &lineError{line: line, column: col[k] + 1, field: k, err: err}
	}
	s := client.Score{Member: get("member"), ID: get("id")}
	var err error
	if s.Score, err = parseScore(get("score")); err != nil {
		return fail("score", err)
	}
	if v := get("subscore"); v != "" {
		if s.Subscore, err = parseScore(v); err != nil {
			return fail("subscore", err)
		}
	}
	if k, err := checkScore(s); err != nil {
		return fail(k, err)
	}
	return fileLine{line: line, score: s}, nil
}

func readJSONL(data []byte) ([]fileLine, error) {
	var out []fileLine
	line := 0
	for text := range bytes.Lines(data) {
		line++
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		s, k, err := parseJSONLine(text)
		if err == nil {
			k, err = checkScore(s)
		}
		if err != nil {
			return nil, &lineError{line: line, field: k, err: err}
		}
		out = append(out, fileLine{line: line, score: s})
	}
	return out, nil
}

// jsonFields are the fields of a JSON line, in the order they are checked.
var jsonFields = []string{"member", "score", "subscore", "id"}

// parseJSONLine parses one JSON object of member, score (required),
// subscore and id, and returns the field at fault with an error. Numbers
// must be JSON numbers (not strings); invalid UTF-8 is refused, never
// replaced.
func parseJSONLine(text []byte) (client.Score, string, error) {
	var s client.Score
	var fields map[string]json.RawMessage
	if !utf8.Valid(text) {
		return s, "", errors.New("invalid UTF-8")
	}
	if err := json.Unmarshal(text, &fields); err != nil || fields == nil {
		return s, "", errors.New("not a JSON object")
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(jsonFields, k) {
			return s, k, errors.New("unknown field: want member, score, subscore and id")
		}
	}
	for _, k := range jsonFields {
		raw, ok := fields[k]
		var err error
		switch {
		case !ok && (k == "member" || k == "score"):
			err = errors.New("required")
		case !ok:
		case k == "member":
			err = jsonString(raw, &s.Member)
		case k == "id":
			err = jsonString(raw, &s.ID)
		case k == "score":
			s.Score, err = parseScore(string(raw))
		default:
			s.Subscore, err = parseScore(string(raw))
		}
		if err != nil {
			return s, k, err
		}
	}
	return s, "", nil
}

// jsonString decodes raw into dst where it is a JSON string.
func jsonString(raw json.RawMessage, dst *string) error {
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, dst) != nil {
		return fmt.Errorf("%s is not a string", raw)
	}
	return nil
}

// checkScore checks s with the rules the gateway applies to a submission
// (hub's and the API's), so that a line it would refuse stops the import
// before anything is sent: the member id's (identity.Reason), the id's
// length and UTF-8. Scores were checked as they were parsed. It returns the
// field at fault.
func checkScore(s client.Score) (string, error) {
	switch {
	case identity.Reason(s.Member) != "":
		return "member", errors.New(identity.Reason(s.Member))
	case len(s.ID) > hub.MaxIDLen:
		return "id", fmt.Errorf("%d bytes, at most %d", len(s.ID), hub.MaxIDLen)
	case !utf8.ValidString(s.ID):
		return "id", errors.New("invalid UTF-8")
	}
	return "", nil
}

// decimal is the form of a number in an import: digits, an optional point
// and exponent. strconv.ParseFloat also reads hexadecimal (0x1p10),
// underscores (1_000 in some forms), Inf and NaN, which a spreadsheet or
// a typo may produce and which the file's author did not mean as a score.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// parseScore parses a score or subscore: a decimal number within float64's
// range.
func parseScore(v string) (float64, error) {
	if !decimal.MatchString(v) {
		return 0, fmt.Errorf("%q is not a decimal number", v)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is out of range (beyond ±1.8e308)", v)
	}
	return f, nil
}

// contentDigest is the SHA-256 of data with CRLF line ends read as LF and
// without trailing line ends: the same file saved by another editor, or
// piped through standard input, has the same digest.
func contentDigest(data []byte) [sha256.Size]byte {
	norm := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	return sha256.Sum256(bytes.TrimRight(norm, "\n"))
}

// lineID is the idempotency id of a line without one: a digest of the
// whole file's content and the line's number, never of the path as typed.
// The same file imported again (as ./f, by its absolute path or through
// standard input) gives the same ids and so applies nothing twice; the same
// text on line 2 of another file is another submission. A file that grew
// is another file: import its new lines alone, or give each line an id.
func lineID(digest [sha256.Size]byte, line int) string {
	sum := sha256.Sum256(fmt.Appendf(digest[:], "\x00line %d", line))
	return "import-" + hex.EncodeToString(sum[:16])
}

// exitFor is the exit status of a flag parse error: 0 for -h.
func exitFor(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
