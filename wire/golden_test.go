package wire_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/wire"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json from wire.Examples")

// Golden returns an example's JSON as testdata holds it: indented by two
// spaces, with a final newline.
func golden(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return append(b, '\n')
}

// TestGolden checks testdata/NAME.json against each example's JSON (with
// -update: writes it), and that every file there is an example's.
func TestGolden(t *testing.T) {
	names := map[string]bool{}
	for _, ex := range wire.Examples() {
		names[ex.Name+".json"] = true
		t.Run(ex.Name, func(t *testing.T) {
			path := filepath.Join("testdata", ex.Name+".json")
			want := golden(t, ex.Value)
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./wire -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is not the example's JSON (go test ./wire -update rewrites it):\n got %s\nwant %s", path, got, want)
			}
			checkRoundTrip(t, got, ex.Value)
		})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, f := range files {
		if !names[filepath.Base(f)] {
			t.Errorf("%s is no example's: delete it or add its example", f)
		}
	}
}

// checkRoundTrip decodes data strictly into a new value of v's type and
// checks that it equals v: every field of the file has a field of the type.
func checkRoundTrip(t *testing.T, data []byte, v any) {
	t.Helper()
	p := reflect.New(reflect.TypeOf(v))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p.Interface()); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got := p.Elem().Interface(); !reflect.DeepEqual(got, v) {
		t.Fatalf("decoded %#v\nwant    %#v", got, v)
	}
}

// TestExamplesPopulated: every field of every exported struct type of the
// package is set (not its zero value) in at least one example, so that a
// field added to a type without its example fails here, and so does a
// type that no example shows. ServerMessage only decodes: it is exempt.
func TestExamplesPopulated(t *testing.T) {
	seen := map[string]bool{} // "Type.Field" set somewhere
	types := map[string]reflect.Type{}
	for _, ex := range wire.Examples() {
		walk(reflect.ValueOf(ex.Value), seen, types)
	}
	for _, name := range exportedStructs(t) {
		if name == "ServerMessage" || name == "Example" {
			continue
		}
		typ, ok := types[name]
		if !ok {
			t.Errorf("no example shows a wire.%s", name)
			continue
		}
		for i := range typ.NumField() {
			if f := typ.Field(i); f.IsExported() && !seen[name+"."+f.Name] {
				t.Errorf("no example sets wire.%s.%s", name, f.Name)
			}
		}
	}
}

// walk records the set fields of v's structs, through pointers, slices and
// maps.
func walk(v reflect.Value, seen map[string]bool, types map[string]reflect.Type) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), seen, types)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walk(v.Index(i), seen, types)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walk(it.Value(), seen, types)
		}
	case reflect.Struct:
		t := v.Type()
		types[t.Name()] = t
		for i := range t.NumField() {
			if !v.Field(i).IsZero() {
				seen[t.Name()+"."+t.Field(i).Name] = true
			}
			walk(v.Field(i), seen, types)
		}
	}
}

// exportedStructs lists the exported struct types declared in the
// package's non-test files.
func exportedStructs(t *testing.T) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.IsExported() {
					if _, ok := ts.Type.(*ast.StructType); ok {
						out = append(out, ts.Name.Name)
					}
				}
				return true
			})
		}
	}
	slices.Sort(out)
	if len(out) < 20 {
		t.Fatalf("only %d struct types found", len(out))
	}
	return out
}

// TestCodes: every code has its status, and the close codes' Final
// matches PROTOCOL.md's "do not reconnect".
func TestCodes(t *testing.T) {
	want := []int{400, 401, 403, 404, 405, 409, 413, 429, 503, 500}
	if len(wire.Codes) != len(want) {
		t.Fatalf("wire.Codes has %d codes, want %d: a code added or dropped needs its status here", len(wire.Codes), len(want))
	}
	for i, c := range wire.Codes {
		if got := c.Status(); got != want[i] {
			t.Errorf("%s.Status() = %d, want %d", c, got, want[i])
		}
	}
	if wire.Code("nope").Status() != 500 {
		t.Error("an unknown code is not 500")
	}
	final := map[wire.CloseCode]bool{1007: true, 1009: true, 4003: true}
	for _, c := range wire.CloseCodes {
		if c.Final() != final[c] {
			t.Errorf("%s.Final() = %v", c, c.Final())
		}
	}
}

// TestServerMessageIsTheUnion: ServerMessage, which clients decode any
// server message into, has exactly the members of the server messages.
func TestServerMessageIsTheUnion(t *testing.T) {
	union := map[string]bool{}
	for _, v := range []any{wire.Snapshot{}, wire.Diff{}, wire.ErrorMessage{}, wire.BoardMessage{}, wire.Heartbeat{}} {
		for _, name := range jsonNames(reflect.TypeOf(v)) {
			union[name] = true
		}
	}
	got := map[string]bool{}
	for _, name := range jsonNames(reflect.TypeOf(wire.ServerMessage{})) {
		got[name] = true
	}
	if !reflect.DeepEqual(got, union) {
		t.Fatalf("ServerMessage has %v, the server messages %v", got, union)
	}
}

// jsonNames lists t's json member names.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}
