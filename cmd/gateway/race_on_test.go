//go:build race

package main

// raceEnabled: this test binary runs with the race detector, and so do the
// gateway binaries its tests build (failpointGateway).
const raceEnabled = true
