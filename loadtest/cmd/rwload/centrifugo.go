package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/rankwire/rankwire/loadtest"
)

// centrifugoIdle runs loadtest.CentrifugoIdle and prints its report.
func centrifugoIdle(ctx context.Context, args []string) error {
	var c loadtest.CentrifugoIdleConfig
	fs := flag.NewFlagSet("centrifugo-idle", flag.ExitOnError)
	fs.StringVar(&c.URL, "url", "ws://127.0.0.1:18200/connection/websocket", "Centrifugo's WebSocket endpoint on loopback")
	fs.IntVar(&c.Conns, "conns", 1000, "connections, each subscribed to one channel (every fourth to a shared one)")
	fs.IntVar(&c.PID, "pid", 0, "the server's `PID`: its CPU and RSS are read from /proc")
	fs.StringVar(&c.Pprof, "pprof", "", "the server's pprof `host:port`: a collection runs before each RSS reading")
	fs.DurationVar(&c.Hold, "hold", 10*time.Second, "how long the connections stay open once all are connected")
	fs.IntVar(&c.SrcIPs, "src-ips", 4, "127.0.0.x source addresses to spread the connections over")
	_ = fs.Parse(args) // ExitOnError
	r, err := loadtest.CentrifugoIdle(ctx, c)
	if err != nil {
		return err
	}
	fmt.Println(r)
	return nil
}
