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
	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/redact"
)

// startTimeout bounds how long the embedded server may take to accept
// connections: its start recovers every stream from disk and, clustered,
// sets up TLS routes first. 10 s was too short for three -race nodes on a
// loaded 2-core machine (a node exited while its peers had answered);
// /healthz and /readyz answer meanwhile (cmd/gateway's early listener).
const startTimeout = 2 * time.Minute

// startEmbedded starts a nats-server with JetStream on cfg.DataDir/nats,
// with the options natsconf.ServerOptions builds from cfg (no port at all
// without cfg.Cluster: the Hub reaches it in-process). The caller shuts
// it down.
func startEmbedded(cfg Config) (*server.Server, error) {
	opts, err := natsconf.ServerOptions(natsconf.Embedded{StoreDir: filepath.Join(cfg.DataDir, "nats"),
		MaxStore: cfg.MaxStore, Sync: cfg.Sync, Cluster: cfg.Cluster})
	if err != nil {
		return nil, err
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("hub: embedded nats-server: %w", err)
	}
	fatal := &natsconf.FatalLog{}
	s.SetLogger(fatal, false, false)
	s.Start()
	if err := awaitReady(s, fatal); err != nil {
		s.Shutdown()
		return nil, err
	}
	return s, nil
}

// awaitReady waits up to startTimeout for s to accept connections, and
// fails at once where s logged a fatal line: a listener it could not open
// (natsconf.FatalLog), which it would otherwise wait for the whole time.
func awaitReady(s *server.Server, fatal *natsconf.FatalLog) error {
	deadline := time.Now().Add(startTimeout)
	for !s.ReadyForConnections(100 * time.Millisecond) {
		if err := fatal.Err(); err != nil {
			return fmt.Errorf("hub: embedded nats-server: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hub: embedded nats-server not ready after %v", startTimeout)
		}
	}
	return nil
}

// connect dials the embedded server in-process (s not nil; url is then
// empty and unused), or url, with auth and extra options added.
// Asynchronous connection errors go to log (nats.go would write them to
// stderr).
func connect(url string, s *server.Server, auth []nats.Option, log *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
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
	opts = append(opts, auth...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, unavailable("NATS is unavailable", fmt.Errorf("connect %s: %w", redact.URLs(url), err))
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
