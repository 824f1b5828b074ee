//go:build race

package live

// raceEnabled: the race detector doubles goroutine stacks, so stack bounds
// do not hold under it.
const raceEnabled = true
