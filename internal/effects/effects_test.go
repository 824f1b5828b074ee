package effects

import (
	"errors"
	"testing"

	"github.com/rankwire/rankwire/auth"
)

// TestAllow: the role first, then the board's reach where the row needs
// one; a board rule given no board refuses (fail closed).
func TestAllow(t *testing.T) {
	read := auth.Scope{Tenant: "t", Roles: auth.RoleRead}
	scoped := auth.Scope{Tenant: "t", Roles: auth.RoleRead, Boards: []string{"slots-*"}}
	admin := auth.Scope{Tenant: "t", Roles: auth.RoleAdmin}
	for _, tc := range []struct {
		name  string
		e     Effect
		sc    auth.Scope
		board string
		want  error
	}{
		{"read on any board", Routes["GET /v1/boards/{board}/top"], read, "weekly", nil},
		{"scoped in reach", Routes["GET /v1/boards/{board}/top"], scoped, "slots-1", nil},
		{"scoped out of reach", Routes["GET /v1/boards/{board}/top"], scoped, "poker-final", auth.ErrBoard},
		{"no role", Routes["PUT /v1/boards/{board}"], read, "weekly", auth.ErrRole},
		{"admin implies read", Routes["GET /v1/boards/{board}/top"], admin, "weekly", nil},
		{"board rule without a board", Messages["subscribe"], read, "", ErrNoBoard},
		{"any role", Routes["GET /v1/members/{member}/profile"], auth.Scope{Tenant: "t", Roles: auth.RoleSubmit}, "", nil},
		{"no token needed", Routes["GET /healthz"], auth.Scope{}, "", nil},
		{"auth needs read", Messages["auth"], auth.Scope{Tenant: "t", Roles: auth.RoleSubmit}, "", auth.ErrRole},
	} {
		err := tc.e.Allow(tc.sc, tc.board)
		if (tc.want == nil) != (err == nil) || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := AllowMessage("no-such-type", read, "b"); !errors.Is(err, ErrNoRow) {
		t.Errorf("a message without a row: %v, want ErrNoRow", err)
	}
}
