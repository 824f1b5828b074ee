//go:build !race

package live

// raceEnabled: see race_on_test.go.
const raceEnabled = false
