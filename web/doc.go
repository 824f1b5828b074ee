// Package web owns what a person sees of rankwire: the embeddable widget
// (static/rankwire.js, the <rankwire-board> custom element, and
// static/client.js, the protocol client it is built on) and the demo page
// (static/index.html), embedded in the binary and served by Handler.
//
// The JavaScript is dependency-free ES modules with no build step: what is
// in static/ is what browsers load. Package web imports no other rankwire
// package; the gateway hands it what the demo page needs through Demo.
// docs/EMBED.md is the widget's user documentation.
package web
