package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startTimeout bounds how long the embedded server may take to accept
// connections.
const startTimeout = 10 * time.Second

// startEmbedded starts a nats-server with JetStream on dataDir/nats that
// listens on no port at all (DontListen): the Hub reaches it in-process
// (connect with nats.InProcessServer), so no other process can read or
// write the streams through it. maxStore is JetStream's disk limit in bytes
// (0: NATS's default). The caller shuts it down.
func startEmbedded(dataDir string, maxStore int64) (*server.Server, error) {
	opts := &server.Options{
		ServerName: "rankwire",
		DontListen: true,
		JetStream:  true,
		StoreDir:   filepath.Join(dataDir, "nats"),
		NoSigs:     true,
		NoLog:      true,
	}
	if maxStore > 0 { // else NATS's default: 75 % of the disk's free space at start
		opts.JetStreamMaxStore = maxStore
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("hub: embedded nats-server: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(startTimeout) {
		s.Shutdown()
		return nil, fmt.Errorf("hub: embedded nats-server not ready after %v", startTimeout)
	}
	return s, nil
}

// connect dials the embedded server in-process (s not nil; url is then
// empty and unused), or url, with extra options added. Asynchronous
// connection errors go to log (nats.go would write them to stderr).
func connect(url string, s *server.Server, log *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("rankwire-hub"), nats.MaxReconnects(-1),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("hub: NATS", "err", err, "subject", sub.Subject)
				return
			}
			log.Warn("hub: NATS", "err", err)
		})}
	opts = append(opts, extra...)
	if s != nil {
		opts = append(opts, nats.InProcessServer(s))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, unavailable("NATS is unavailable", fmt.Errorf("connect %s: %w", url, err))
	}
	return nc, nil
}

// checkJetStream fails with ErrNoJetStream where the server lacks it.
func checkJetStream(ctx context.Context, js jetstream.JetStream, url string) error {
	_, err := js.AccountInfo(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled),
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w (%s): %v", ErrNoJetStream, url, err)
	}
	return unavailable("NATS is unavailable", fmt.Errorf("JetStream account info from %s: %w", url, err))
}
