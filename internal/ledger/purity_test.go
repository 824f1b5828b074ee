package ledger

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The ledger must stay a pure function of its events: no clock, no
// goroutine, no I/O. These tests read the package's own source.

// forbiddenImports are packages a ledger file may not import: I/O, logs,
// randomness, atomics and NATS. net/url (parsing an avatar URL) is allowed.
var forbiddenImports = []string{
	"os", "os/*", "net", "net/http", "net/http/*", "net/rpc", "net/smtp", "net/mail", "net/netip",
	"io/fs", "io/ioutil", "log", "log/*", "syscall", "runtime", "unsafe", "plugin", "sync/atomic",
	"math/rand", "math/rand/v2", "crypto/rand", "github.com/nats-io/*",
}

// forbiddenTime are the functions of package time that read the clock or
// start a timer.
var forbiddenTime = map[string]bool{
	"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true, "Tick": true,
	"NewTicker": true, "NewTimer": true, "Sleep": true,
}

// TestPure fails if a non-test file of the package imports a forbidden
// package, calls a clock or timer function of package time, or starts a
// goroutine.
func TestPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range impurities(t, name, src) {
			t.Error(p)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked %d files: the package's sources were not found", checked)
	}
}

// impurities lists what makes the file src impure, one line each.
func impurities(t *testing.T, name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	timeNames := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if forbidden(path) {
			out = append(out, fmt.Sprintf("%s: imports %s", fset.Position(imp.Pos()), path))
		}
		if path == "time" {
			local := "time"
			if imp.Name != nil {
				local = imp.Name.Name
			}
			timeNames[local] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, fmt.Sprintf("%s: starts a goroutine", fset.Position(n.Pos())))
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && timeNames[x.Name] && forbiddenTime[n.Sel.Name] {
				out = append(out, fmt.Sprintf("%s: uses time.%s", fset.Position(n.Pos()), n.Sel.Name))
			}
		}
		return true
	})
	return out
}

func forbidden(path string) bool {
	for _, f := range forbiddenImports {
		if path == f || strings.HasSuffix(f, "/*") && strings.HasPrefix(path, strings.TrimSuffix(f, "*")) {
			return true
		}
	}
	return false
}

// TestPureDetects guards the guard: each kind of impurity is caught, under
// an import alias too, and a pure file passes.
func TestPureDetects(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      int
	}{
		{"pure", `package p; import ("time"; "net/url"); func f() time.Duration { _ = url.URL{}; return time.Second }`, 0},
		{"clock", `package p; import "time"; func f() { _ = time.Now(); _ = time.Since(time.Time{}) }`, 2},
		{"alias", `package p; import clock "time"; func f() { <-clock.After(1) }`, 1},
		{"timer", `package p; import "time"; func f() { time.NewTimer(1); time.AfterFunc(1, nil) }`, 2},
		{"goroutine", `package p; func f() { go f() }`, 1},
		{"io", `package p; import ("os"; "log/slog"; "io/fs"; "github.com/nats-io/nats.go"); var _ = os.Args`, 4},
		{"randomness", `package p; import "math/rand/v2"; var _ = rand.Int()`, 1},
	} {
		if got := impurities(t, tt.name+".go", []byte(tt.src)); len(got) != tt.want {
			t.Errorf("%s: %d impurities %q, want %d", tt.name, len(got), got, tt.want)
		}
	}
}
