package loadtest

import (
	"context"
	"fmt"
	"time"
)

// probeSyncSize is what the fsync loop appends before each fsync: about
// one group-committed event of a few submissions.
const probeSyncSize = 512

// probeSync appends probeSyncSize bytes to a new file in dir every
// interval and fsyncs it, recording each append and fsync: the least a
// write acknowledged only once on disk (the gateway's --sync always)
// waits here for the disk, beside the CPU. The file is removed at the end;
// it grows by at most 50 KiB a second at 10 ms. It returns nil when ctx
// ends.
func probeSync(ctx context.Context, dir string, interval time.Duration, s *probeSeries) error {
	a, err := newSyncAppender(dir, "rwload-probe-sync-*", probeSyncSize)
	if err != nil {
		return fmt.Errorf("probe: fsync %w", err)
	}
	defer a.close()
	return timedTicks(ctx, interval, s, func() error {
		if err := a.step(); err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		return nil
	})
}
