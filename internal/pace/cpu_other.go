//go:build !unix

package pace

import "time"

// processCPU reports no CPU clock here: a drain's busy time is its wall time.
func processCPU() (time.Duration, bool) { return 0, false }
