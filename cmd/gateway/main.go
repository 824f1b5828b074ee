// Command gateway runs rankwire: the HTTP API (and live views) over a hub
// on NATS JetStream, embedded by default. Flags and environment become a
// Config; run wires the parts, serves until SIGTERM or interrupt (SIGHUP
// reloads the key file: reload.go), and shuts down in order. See
// docs/OPERATIONS.md. `gateway verify` is the audit replay (verify.go);
// `gateway token` mints a token from the key file (token.go), `gateway keygen`
// writes a first key file (keygen.go); `gateway
// import` and `gateway export` move scores in and standings out (port.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "-version" || os.Args[1] == "version") {
		fmt.Println(versionString())
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "keygen" {
		os.Exit(runKeygen(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && (os.Args[1] == "backup" || os.Args[1] == "restore") {
		os.Exit(runBackupCommand(os.Args[1], os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "token" {
		os.Exit(runToken(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && (os.Args[1] == "import" || os.Args[1] == "export") {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		run := runImport
		if os.Args[1] == "export" {
			run = runExport
		}
		status := run(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(status)
	}
	if len(os.Args) > 1 && os.Args[1] == "verify" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		status := runVerify(ctx, os.Args[2:], os.Getenv, os.Stdout, os.Stderr)
		stop()
		os.Exit(status)
	}
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, newLogger(cfg.LogFormat), os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

func newLogger(format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}
