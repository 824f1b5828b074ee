// Command gateway runs rankwire: the HTTP API (and live views) over a hub
// on NATS JetStream, embedded by default. Flags and environment become a
// Config; run wires the parts, serves until SIGTERM or interrupt (SIGHUP
// reloads the key file: reload.go), and shuts down in order. See
// docs/OPERATIONS.md. The subcommands (subcommands, below): `gateway verify`
// is the audit replay (verify.go); `gateway token` mints a token from the
// key file (token.go), `gateway keygen` writes a first key file
// (keygen.go); `gateway import` and `gateway export` move scores in and
// standings out (port.go); `gateway backup` and `gateway restore` copy the
// streams out and back (backup.go, restore.go); `gateway cluster` lists and removes the
// embedded cluster's peers (cluster_cmd.go); `gateway help` lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one subcommand: `gateway <name> <args>`.
type command struct {
	name  string
	args  string // its usage after the name
	about string // one line
	run   func(args []string, stdout, stderr io.Writer) int
}

// subcommands lists the subcommands in the order help shows them. Serving
// is not among them: it is what `gateway [flags]` does. A function, not a
// variable: help's usage text lists them.
func subcommands() []command {
	return []command{
		{"keygen", "--out FILE --tenant NAME [--alg HS256|EdDSA] [--kid KID] [--private-key-out FILE] [--ttl 24h]",
			"write a first key file (one tenant) and print an admin token", runKeygen},
		{"token", "--keys FILE --kid KID [--roles read,submit,admin] [--boards PATTERNS] [--sub MEMBER] [--ttl 1h] [--private-key FILE]",
			"mint a token signed by a key of the key file", runToken},
		{"import", "--board BOARD [--url URL,...] [--token TOKEN] [--format csv|jsonl] FILE|-",
			"submit a file of scores through a running gateway, each line once", withSignals(runImport)},
		{"export", "--board BOARD [--url URL,...] [--token TOKEN] [--limit N]",
			"write a board's standings as CSV through a running gateway", withSignals(runExport)},
		{"verify", "[--data DIR | --nats URL [--nats-creds FILE] ...] [--tenant TENANT]...",
			"rebuild every board from its stream and compare it with the snapshots", withSignals(runVerifyEnv)},
		{"backup", "--out DIR [--nats URL | --data DIR] [flags]",
			"write a consistent copy of every stream the gateway keeps", backupVerb("backup")},
		{"restore", "--from BACKUP (--data NEWDIR | --nats URL [flags])",
			"check a backup and restore it into a new data directory or a new cluster's NATS", backupVerb("restore")},
		{"cluster", "peers|remove NODE [--data DIR]",
			"list the embedded cluster's meta peers, or remove a departed one, through the node running on --data", runCluster},
		{"version", "", "print the version", runVersion},
		{"help", "", "list the subcommands and the flags of serving", runHelp},
	}
}

// dispatch runs the subcommand args name, or serves, and returns the exit
// status.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-version":
			return runVersion(nil, stdout, stderr)
		case "--help", "-help", "-h":
			return runHelp(nil, stdout, stderr)
		}
		for _, c := range subcommands() {
			if c.name == args[0] {
				return c.run(args[1:], stdout, stderr)
			}
		}
	}
	return serve(args, stdout, stderr)
}

// printCommands writes the usage lines of serving and of every subcommand.
func printCommands(w io.Writer) {
	fmt.Fprintf(w, "Usage:\n  gateway [flags]\n        serve the API and live views until SIGTERM (flags below)\n")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace("gateway "+c.name+" "+c.args), c.about)
	}
	fmt.Fprintf(w, "\n`gateway <subcommand> -h` lists a subcommand's flags.\n\n")
}

// runHelp prints the subcommands and the flags of serving to stdout. It
// never fails.
func runHelp(_ []string, stdout, _ io.Writer) int {
	_, _ = parseConfig([]string{"-h"}, func(string) string { return "" }, stdout)
	return 0
}

func runVersion(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintln(stdout, versionString())
	return 0
}

// backupVerb runs `gateway backup` or `gateway restore` (restore.go's
// runBackupCommand: signals, the process's environment and streams).
func backupVerb(verb string) func([]string, io.Writer, io.Writer) int {
	return func(args []string, _, _ io.Writer) int { return runBackupCommand(verb, args) }
}

// runVerifyEnv is runVerify with the process's environment.
func runVerifyEnv(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runVerify(ctx, args, os.Getenv, stdout, stderr)
}

// withSignals runs a subcommand under a context that SIGTERM and interrupt
// end.
func withSignals(run func(context.Context, []string, io.Writer, io.Writer) int) func([]string, io.Writer, io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		return run(ctx, args, stdout, stderr)
	}
}

// serve parses the flags and environment and runs the gateway until
// SIGTERM or interrupt.
func serve(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, os.Getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := newLogger(cfg.LogFormat)
	defer exitIfStuck(ctx, log)() // stopbound.go: a SIGTERM always ends the process
	if err := run(ctx, cfg, log, stdout, nil); err != nil {
		fmt.Fprintln(stderr, "gateway:", err)
		return 1
	}
	return 0
}

func newLogger(format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}
