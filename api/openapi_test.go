package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

var spec struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// loadSpec loads and validates spec/openapi.json once per test binary.
func loadSpec(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	spec.once.Do(func() {
		loader := openapi3.NewLoader()
		spec.doc, spec.err = loader.LoadFromData(OpenAPI())
		if spec.err != nil {
			return
		}
		if spec.err = spec.doc.Validate(loader.Context); spec.err != nil {
			return
		}
		spec.doc.Servers = nil // the tests' servers listen on any port
		spec.router, spec.err = legacy.NewRouter(spec.doc)
	})
	if spec.err != nil {
		t.Fatalf("spec/openapi.json: %v", spec.err)
	}
	return spec.doc, spec.router
}

// TestOpenAPIMatchesRouter: every route of the router is in the document,
// with its methods, and every route of the document is on the router.
func TestOpenAPIMatchesRouter(t *testing.T) {
	doc, _ := loadSpec(t)
	keys, h := startTestHub(t, ``, hub.Config{})
	s := New(Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{}), Keys: keys, Static: http.NotFoundHandler()})
	routed := map[string]bool{}
	err := chi.Walk(s.router.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(route, "/")
		if route == "" {
			route = "/"
		}
		if strings.HasSuffix(route, "/*") {
			route = strings.TrimSuffix(route, "/*") + "/{file}"
		}
		if method == "HEAD" || method == "OPTIONS" || method == "CONNECT" || method == "TRACE" || method == "PATCH" && strings.HasSuffix(route, "{file}") {
			return nil
		}
		if strings.HasSuffix(route, "{file}") && method != "GET" {
			return nil // Handle mounts every method; the files answer GET
		}
		routed[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for r := range routed {
		if !documented[r] {
			t.Errorf("%s is routed but not in the OpenAPI document", r)
		}
	}
	for d := range documented {
		if !routed[d] {
			t.Errorf("%s is documented but not routed", d)
		}
	}
	if len(routed) < 25 {
		t.Fatalf("only %d routes walked", len(routed))
	}
	// It is served as it is embedded.
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, OpenAPI()) || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// specChecked wraps h so that every answer of the test suite is validated
// against the OpenAPI document, and every request the gateway accepted
// (2xx) too: a 2xx to a request the document calls invalid, or an answer
// that is not documented, fails the test. WebSocket upgrades pass through,
// and so do OPTIONS and HEAD: HTTP's methods of every route (api/cors.go,
// docs/PROTOCOL.md), not operations of the document.
func specChecked(t testing.TB, h http.Handler) http.Handler {
	_, router := loadSpec(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/ws" || r.Method == http.MethodOptions || r.Method == http.MethodHead {
			h.ServeHTTP(w, r)
			return
		}
		// What the handler reads of the body is kept for the check: reading
		// it first would take the handler's own deadlines out of play.
		var reqBuf bytes.Buffer
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &reqBuf), r.Body}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		reqBody := reqBuf.Bytes()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		check := r.Clone(context.Background())
		check.Body = io.NopCloser(bytes.NewReader(reqBody))
		if ct := check.Header.Get("Content-Type"); ct == "" || ct == "application/x-www-form-urlencoded" {
			check.Header.Set("Content-Type", "application/json") // the gateway reads every body as JSON, whatever it is labelled (curl -d)
		}
		route, params, err := router.FindRoute(check)
		if err != nil {
			// 405 (with Allow) is HTTP's answer to a method no operation
			// has, as 404 to a path none has: neither is an operation.
			if rec.Code != http.StatusNotFound && rec.Code != http.StatusBadRequest && rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s answered %d but is not in the OpenAPI document: %v", r.Method, r.URL.Path, rec.Code, err)
			}
			return
		}
		opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
		in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: opts}
		if rec.Code/100 == 2 {
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				t.Errorf("%s %s was accepted (%d) but the OpenAPI document calls the request invalid: %v", r.Method, r.URL, rec.Code, err)
			}
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
			Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: opts}
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("%s %s answered %d %s, which the OpenAPI document does not describe: %v", r.Method, r.URL, rec.Code, truncateBody(rec.Body.Bytes()), err)
		}
	})
}

func truncateBody(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

var wsSpec struct {
	once    sync.Once
	schemas map[string]*openapi3.Schema // server messages by type
	err     error
}

// wsSchemas returns the JSON Schemas of the server's WebSocket messages
// (x-websocket.server), their $refs to components inlined.
func wsSchemas(t testing.TB) map[string]*openapi3.Schema {
	t.Helper()
	wsSpec.once.Do(func() {
		var raw struct {
			XWebsocket struct {
				Server map[string]json.RawMessage `json:"server"`
			} `json:"x-websocket"`
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if wsSpec.err = json.Unmarshal(OpenAPI(), &raw); wsSpec.err != nil {
			return
		}
		wsSpec.schemas = map[string]*openapi3.Schema{}
		for typ, body := range raw.XWebsocket.Server {
			compact := func(b []byte) string {
				var buf bytes.Buffer
				_ = json.Compact(&buf, b)
				return buf.String()
			}
			text := compact(body)
			for name, s := range raw.Components.Schemas {
				text = strings.ReplaceAll(text, `{"$ref":"#/components/schemas/`+name+`"}`, compact(s))
			}
			var sch openapi3.Schema
			if wsSpec.err = json.Unmarshal([]byte(text), &sch); wsSpec.err != nil {
				return
			}
			wsSpec.schemas[typ] = &sch
		}
	})
	if wsSpec.err != nil || len(wsSpec.schemas) < 4 {
		t.Fatalf("x-websocket schemas: %v (%d)", wsSpec.err, len(wsSpec.schemas))
	}
	return wsSpec.schemas
}

// checkWSMessage fails the test where raw, a server message, does not
// match its type's schema in x-websocket.
func checkWSMessage(t testing.TB, raw []byte) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Errorf("WebSocket message %s: %v", raw, err)
		return
	}
	typ, _ := v["type"].(string)
	sch := wsSchemas(t)[typ]
	if sch == nil {
		t.Errorf("WebSocket message of type %q is not in the OpenAPI document's x-websocket: %s", typ, raw)
		return
	}
	var generic any
	_ = json.Unmarshal(raw, &generic)
	if err := sch.VisitJSON(generic); err != nil {
		t.Errorf("WebSocket message %s does not match x-websocket.server.%s: %v", truncateBody(raw), typ, err)
	}
}
