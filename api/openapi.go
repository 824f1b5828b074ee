package api

import (
	_ "embed"
	"net/http"
)

// openAPI is the HTTP API as an OpenAPI 3.1 document, with the WebSocket
// messages as JSON Schemas under x-websocket (spec/openapi.json). The
// tests check it against the router and validate the suite's requests and
// answers against it.
//
//go:embed spec/openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI document the gateway serves at /openapi.json.
func OpenAPI() []byte { return openAPI }

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPI)
}
