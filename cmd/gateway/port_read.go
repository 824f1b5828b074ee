package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
)

// Reading and checking the file of `gateway import` (port.go): every line
// is parsed and checked with the gateway's own rules before anything is
// sent, and each line without an id gets one derived from the file's
// content.

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
