package jserr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestClassify(t *testing.T) {
	api := func(code jetstream.ErrorCode) error {
		return fmt.Errorf("publish: %w", &jetstream.APIError{Code: 503, ErrorCode: code})
	}
	for _, tc := range []struct {
		name             string
		err              error
		retry, storeFull bool
	}{
		{"no responders", nats.ErrNoResponders, true, false},
		{"no stream response", jetstream.ErrNoStreamResponse, true, false},
		{"canceled", context.Canceled, false, false},
		{"wrong stream (10060)", api(10060), false, false},
		{"wrapped timeout", fmt.Errorf("x: %w", nats.ErrTimeout), true, false},
		{"deadline", context.DeadlineExceeded, true, false},
		{"reconnecting", nats.ErrConnectionReconnecting, true, false},
		{"no leader (10008)", api(10008), true, false},
		{"stream offline (10118)", api(10118), true, false},
		{"same message id in process (10158)", api(10158), true, false},
		{"account full (10002)", api(10002), false, true},
		{"server full (10023)", api(10023), false, true},
		{"no storage for a stream (10047)", api(10047), false, true},
		{"stream not found (10059)", api(10059), false, false},
		{"another error", errors.New("boom"), false, false},
		{"nil", nil, false, false},
	} {
		if got := Retryable(tc.err); got != tc.retry {
			t.Errorf("%s: Retryable %v", tc.name, got)
		}
		if got := StoreFull(tc.err); got != tc.storeFull {
			t.Errorf("%s: StoreFull %v", tc.name, got)
		}
	}
}
