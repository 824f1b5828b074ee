package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/rankwire/rankwire/hub"
)

// `gateway verify` is the audit replay (hub.Verify): it rebuilds every
// tenant's boards from the stream alone and compares them with the
// snapshots, so that an operator, or a regulator, can check that the
// standings follow from the submissions. Exit status: 0 every snapshot
// matches, 1 a difference (listed), 2 the replay could not run.

// tenantList is a repeatable --tenant flag.
type tenantList []string

func (l *tenantList) String() string     { return fmt.Sprint(*l) }
func (l *tenantList) Set(v string) error { *l = append(*l, v); return nil }

// runVerify parses verify's flags from args (over RANKWIRE_DATA and
// RANKWIRE_NATS from getenv), runs the replay and prints the report to
// out. It returns the exit status.
func runVerify(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("gateway verify", flag.ContinueOnError)
	fs.SetOutput(errOut)
	data := fs.String("data", or(getenv("RANKWIRE_DATA"), "./data"), "data `directory` of a stopped gateway: its JetStream store and snapshots")
	url := fs.String("nats", getenv("RANKWIRE_NATS"), "verify against this NATS server or cluster instead of --data's store (the gateways may be running)")
	creds := fs.String("nats-creds", "", "NATS credentials `file` for --nats")
	ca := fs.String("nats-tls-ca", "", "CA `file` for --nats")
	cert := fs.String("nats-tls-cert", "", "client certificate `file` for --nats")
	key := fs.String("nats-tls-key", "", "client key `file` for --nats")
	secretFile := fs.String("cluster-secret-file", "", "the cluster secret `file`, for --nats pointed at a node's --nats-listen")
	var tenants tenantList
	fs.Var(&tenants, "tenant", "verify only this `tenant` (repeatable); default: every tenant")
	fs.Usage = func() {
		fmt.Fprintf(errOut, "Usage: gateway verify [flags]\n\nRebuilds every tenant's boards from its stream alone and compares them with the snapshots.\nExit status 0: every snapshot matches; 1: a difference; 2: the replay could not run.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	secret, err := readSecret(*secretFile)
	if err != nil {
		fmt.Fprintln(errOut, "gateway verify:", err)
		return 2
	}
	if *url == "" {
		release, err := lockData(*data)
		if err != nil {
			fmt.Fprintf(errOut, "gateway verify: %v (stop the gateway on %s first, or use --nats)\n", err, *data)
			return 2
		}
		defer release()
	}
	cfg := hub.Config{DataDir: *data, NATSURL: *url, Cluster: hub.Cluster{Secret: secret},
		NATSAuth: hub.NATSAuth{Creds: *creds, TLSCA: *ca, TLSCert: *cert, TLSKey: *key},
		Logger:   slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	audits, err := hub.Verify(ctx, cfg, tenants)
	if err != nil {
		fmt.Fprintln(errOut, "gateway verify:", err)
		return 2
	}
	return printAudits(out, audits)
}

// printAudits writes the report and returns the exit status.
func printAudits(out io.Writer, audits []hub.TenantAudit) int {
	status := 0
	for _, a := range audits {
		if a.Err != nil {
			fmt.Fprintf(out, "tenant %s: replay failed after %d events: %v\n", a.Tenant, a.Events, a.Err)
			status = 2
			continue
		}
		fmt.Fprintf(out, "tenant %s: %d events replayed (stream seq 1..%d), %d boards, %d member ids\n",
			a.Tenant, a.Events, a.LastSeq, a.Boards, a.Members)
		fmt.Fprintf(out, "  state at seq %d: %s\n", a.LastSeq, a.Digest)
		if len(a.Snapshots) == 0 {
			fmt.Fprintln(out, "  no snapshot to compare")
		}
		for _, s := range a.Snapshots {
			if s.Equal {
				fmt.Fprintf(out, "  snapshot (%s) at seq %d: equal to the replay\n", s.Source, s.Seq)
				continue
			}
			fmt.Fprintf(out, "  snapshot (%s) at seq %d: DIFFERS from the replay\n", s.Source, s.Seq)
			for _, d := range s.Diffs {
				fmt.Fprintf(out, "    %s\n", d)
			}
			status = max(status, 1)
		}
	}
	switch status {
	case 0:
		fmt.Fprintf(out, "verify: %d tenants, every snapshot follows from the stream\n", len(audits))
	case 1:
		fmt.Fprintln(out, "verify: DIFFERENCES found (above)")
	}
	return status
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
