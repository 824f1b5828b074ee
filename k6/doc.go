// Package k6 holds the k6 load scripts; its test checks they parse.
//
// The scripts (burst.js, soak.js, lobby.js, with helpers in lib/) drive a
// running gateway over HTTP and WebSocket; README.md, "Load testing with k6",
// says how to get k6 and run them. The package has no Go code to import.
package k6
