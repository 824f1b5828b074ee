package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// runCluster is `gateway cluster peers|remove`: it asks the node running
// on --data, through its admin socket (cluster_admin.go).
func runCluster(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "peers" && args[0] != "remove") {
		fmt.Fprintln(stderr, "gateway cluster: want peers or remove NODE")
		return 2
	}
	verb := args[0]
	fs := flag.NewFlagSet("cluster "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envOr("RANKWIRE_DATA", "./data"), "the data `directory` of the running node to ask")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	c := adminClient(*data)
	var err error
	switch {
	case verb == "peers" && fs.NArg() == 0:
		err = printPeers(c, stdout)
	case verb == "remove" && fs.NArg() == 1:
		err = removePeer(c, fs.Arg(0), stdout)
	default:
		fmt.Fprintf(stderr, "gateway cluster %s: unexpected arguments %q\n", verb, fs.Args())
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "gateway cluster %s: %v\n", verb, err)
		return 1
	}
	return 0
}

// envOr is the environment's name, or def where unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// adminClient speaks HTTP to the admin socket of dataDir.
func adminClient(dataDir string) *http.Client {
	path := filepath.Join(dataDir, adminSocket)
	return &http.Client{Timeout: adminTimeout + 5*time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return nil, fmt.Errorf("no node of an embedded cluster answers on %s (is it running, with --cluster, on this --data?): %w", path, err)
			}
			return conn, nil
		}}}
}

// adminDo sends req and returns its body, or its error text.
func adminDo(c *http.Client, method, path string) ([]byte, error) {
	req, err := http.NewRequest(method, "http://node"+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s", strings.TrimSpace(string(body)))
	}
	return body, nil
}

// printPeers writes the meta peers as a table.
func printPeers(c *http.Client, out io.Writer) error {
	body, err := adminDo(c, "GET", "/peers")
	if err != nil {
		return err
	}
	var a peersAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("the node's answer: %w", err)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tLEADER\tCURRENT\tLAG\tLAST SEEN")
	for _, p := range a.Peers {
		leader, seen := "", "-"
		if p.Leader {
			leader = "yes"
		} else {
			seen = p.Seen.Round(time.Millisecond).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", p.Name, p.State(), leader, yesNo(p.Current), p.Lag, seen)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// removePeer asks the node to remove the departed peer name.
func removePeer(c *http.Client, name string, out io.Writer) error {
	if _, err := adminDo(c, "POST", "/remove?node="+url.QueryEscape(name)); err != nil {
		return err
	}
	fmt.Fprintf(out, "removed %s from the cluster's meta group; it must not come back under this name with its old data\n", name)
	return nil
}
