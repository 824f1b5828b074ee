package live

import (
	"errors"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/effects"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/wire"
)

// errNoReadRole refuses a valid token without the role the table of
// effects' auth row needs (read): it may not connect.
var errNoReadRole = errors.New("token lacks the read role")

// mayConnect reports whether a valid token may open a connection, or
// refresh one: the table of effects' auth row decides (role read).
func mayConnect(sc auth.Scope) error {
	err := effects.AllowMessage(wire.TypeAuth, sc, "")
	if errors.Is(err, auth.ErrRole) {
		return errNoReadRole
	}
	return err // nil, or no row: refused (a wiring mistake a test catches)
}

// auth handles an auth message: the first one authenticates (a refusal
// closes), a later one refreshes the token (see refresh).
func (c *wsConn) auth(token string, authed bool) {
	sc, err := c.p.verifier.Verify(token)
	if authed {
		c.refresh(sc, err)
		return
	}
	if err == nil {
		err = mayConnect(sc)
	}
	switch {
	case err != nil:
		c.refuseToken(err, refusal.KeyTenant(c.p.keyring(), token))
	case !c.p.admit(sc.Tenant):
		c.p.refusals.Refused(refusal.Cap, "tenant", sc.Tenant)
		c.close(newClose(wire.CloseOverLimit, "tenant at its connection cap"))
	default:
		c.setScope(sc, true)
		c.closeIfRevoked(sc) // a reload may have raced the verification
	}
}

// refuseToken logs a refused token (its reason and tenant, where known;
// never the token) and closes 4001 or 4003.
func (c *wsConn) refuseToken(err error, tenant string) {
	c.p.refusals.Refused(refusal.Token, refusal.TokenAttrs(err, tenant)...)
	c.close(tokenClose(err))
}

// refresh applies a later auth message (PROTOCOL.md, "Token refresh
// narrows"). A token that does not verify is answered with an error
// message and the old token stays, until it expires. A valid token of
// another tenant, or without the read role, may not connect: 4003.
// Otherwise the new token's scope replaces the old one, and each
// subscription it no longer reaches ends with a forbidden error message,
// after which nothing more is sent for it. O(subscriptions).
func (c *wsConn) refresh(sc auth.Scope, err error) {
	old, _ := c.current()
	switch {
	case err != nil:
		c.reply("", refreshRefused(err))
	case sc.Tenant != old.Tenant:
		c.refuseToken(errors.New("token of another tenant"), sc.Tenant)
	case mayConnect(sc) != nil:
		c.refuseToken(errNoReadRole, sc.Tenant)
	case c.closeIfRevoked(sc): // a reload raced the verification
	default:
		for _, s := range c.narrow(sc) {
			c.p.leave(s.view)
			c.reply(s.id, forbidden("board: %q is not among the refreshed token's boards", truncate(s.board)))
		}
	}
}

// narrow installs sc, of the connection's tenant, and removes the
// subscriptions it does not reach, returning them for the caller to end.
func (c *wsConn) narrow(sc auth.Scope) []liveSub {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setScopeLocked(sc, true)
	var gone []liveSub
	kept := c.subs[:0]
	for _, s := range c.subs {
		if effects.AllowMessage(wire.TypeSubscribe, sc, s.board) == nil { // the subscribe row, under the new token
			kept = append(kept, s)
			continue
		}
		gone = append(gone, s)
	}
	clear(c.subs[len(kept):]) // the removed ones' slots: no reference kept
	c.subs = kept
	return gone
}

// refreshRefused is the error message for a refresh token that does not
// verify; it names the field, never the token.
func refreshRefused(err error) *Error {
	msg := "token: not a valid token for this gateway"
	if errors.Is(err, auth.ErrExpired) {
		msg = "token: expired"
	}
	return &Error{"unauthorized", msg}
}
