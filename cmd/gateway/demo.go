package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

const (
	demoTenant = "demo"
	demoBoard  = "weekly"
	demoTTL    = 24 * time.Hour
)

// demoKey is the generated demo tenant's signing key. Its secret lives only
// in this process: tokens it mints die with it.
type demoKey struct{ key auth.SigningKey }

// seedDemo creates the demo board and, where seed is set and the board is
// empty, 25 players with scores.
func seedDemo(ctx context.Context, h *hub.Hub, seed bool) error {
	if _, err := h.PutBoard(ctx, demoTenant, demoBoard, hub.Settings{Windows: []string{"all", "day", "week"}}); err != nil && !errors.Is(err, hub.ErrConflict) {
		return err
	}
	info, err := h.Board(demoTenant, demoBoard)
	if err != nil || !seed || info.Members > 0 {
		return err
	}
	items := make([]hub.Item, 25)
	for i := range items {
		items[i] = hub.Item{Member: fmt.Sprintf("player-%02d", i+1), Score: float64((i*7919)%5000 + 1000)}
	}
	_, err = h.Submit(ctx, demoTenant, demoBoard, items)
	return err
}

// printDemo prints the demo tokens and a curl line that works as printed.
func printDemo(w io.Writer, addr string, d *demoKey) {
	exp := time.Now().Add(demoTTL)
	admin, _ := auth.Mint(d.key, auth.Claims{Tenant: demoTenant, Subject: "operator", Roles: auth.RoleAdmin, Expiry: exp})
	read, _ := auth.Mint(d.key, auth.Claims{Tenant: demoTenant, Subject: "player-01", Roles: auth.RoleRead, Expiry: exp})
	base := "http://" + addr
	fmt.Fprintf(w, `
rankwire is serving on %[1]s (demo tenant %[2]q, board %[3]q; tokens valid 24 h)

admin token: %[4]s
read token:  %[5]s

try:
  curl -s -H "Authorization: Bearer %[5]s" "%[1]s/v1/boards/%[3]s/top?limit=5"
  curl -s -X POST -H "Authorization: Bearer %[4]s" -d '{"member":"you","score":9999}' "%[1]s/v1/boards/%[3]s/scores"

`, base, demoTenant, demoBoard, admin, read)
}
