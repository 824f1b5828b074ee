//go:build !rankwire_failpoints || !unix

package failpoint

import (
	"context"
	"log/slog"

	"github.com/rankwire/rankwire/internal/ledger"
)

// AfterApply does nothing: the default build injects no fault.
func AfterApply(*slog.Logger, string, uint64, *ledger.State) {}

// BeforeRebuild does nothing: the default build injects no fault.
func BeforeRebuild(context.Context, *slog.Logger, string) {}
