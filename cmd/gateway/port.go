package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rankwire/rankwire/client"
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
	c, board, scores, err := loadImport(args, stderr)
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(stderr, "gateway import:", err)
		}
		return exitFor(err)
	}
	return sendScores(ctx, c, board, scores, stdout, stderr)
}

// errUsage is a usage error flag has already printed.
var errUsage = errors.New("usage")

// loadImport parses import's flags and reads and checks every line of its
// file, before anything is sent.
func loadImport(args []string, stderr io.Writer) (*client.Client, string, []client.Score, error) {
	fs := flag.NewFlagSet("gateway import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p portFlags
	p.register(fs)
	format := fs.String("format", "", "`csv` or `jsonl`; default: by the file's extension")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, "", nil, err
		}
		return nil, "", nil, errUsage
	}
	if fs.NArg() != 1 {
		return nil, "", nil, errors.New("want one FILE (or - for standard input)")
	}
	c, err := p.client()
	if err != nil {
		return nil, "", nil, err
	}
	path := fs.Arg(0)
	data, err := readInput(path)
	if err != nil {
		return nil, "", nil, err
	}
	if *format == "" {
		*format = "csv"
		if strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".ndjson") || strings.HasSuffix(path, ".json") {
			*format = "jsonl"
		}
	}
	scores, err := readScores(data, *format, path)
	return c, p.board, scores, err
}

// sendScores submits scores in batches and prints the summary; a progress
// bar is drawn only where stderr is a terminal (in a log, its \r frames
// would pile up). It returns the exit status.
func sendScores(ctx context.Context, c *client.Client, board string, scores []client.Score, stdout, stderr io.Writer) int {
	progress := isTerminal(stderr)
	sum := importSummary{read: len(scores)}
	start := time.Now()
	for i := 0; i < len(scores); i += client.MaxBatch {
		batch := scores[i:min(i+client.MaxBatch, len(scores))]
		res, err := submitRetrying(ctx, c, board, batch)
		if err != nil {
			fmt.Fprintf(stderr, "\ngateway import: lines of batch %d (items %d..%d): %v\n", i/client.MaxBatch+1, i+1, i+len(batch), err)
			sum.report(stdout, time.Since(start))
			return 1
		}
		sum.count(res)
		if done := i + len(batch); progress {
			fmt.Fprintf(stderr, "\r%s %d/%d", progressBar(done, len(scores)), done, len(scores))
		}
	}
	if progress {
		fmt.Fprintln(stderr)
	}
	sum.report(stdout, time.Since(start))
	return 0
}

// count adds a batch's results to the summary.
func (s *importSummary) count(res []client.Result) {
	for _, r := range res {
		switch {
		case r.Duplicate:
			s.duplicate++
		case r.Reason != "":
			s.quarantined++
		case r.Applied:
			s.applied++
		default:
			s.kept++
		}
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
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

// exitFor is the exit status of a flag parse error: 0 for -h.
func exitFor(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
