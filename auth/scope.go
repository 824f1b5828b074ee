package auth

import (
	"fmt"
	"strings"
	"time"
)

// Role is a set of permissions. The constants are single roles; a Role value
// may hold several (RoleRead|RoleSubmit).
type Role uint8

// The roles of the "roles" claim.
const (
	RoleRead   Role = 1 << iota // read boards and watch live views
	RoleSubmit                  // submit scores and link identities
	RoleAdmin                   // manage boards; implies RoleRead and RoleSubmit
)

var roleNames = [...]struct {
	role Role
	name string
}{{RoleRead, "read"}, {RoleSubmit, "submit"}, {RoleAdmin, "admin"}}

// ParseRole returns the role named s ("read", "submit" or "admin"), or false.
func ParseRole(s string) (Role, bool) {
	for _, r := range roleNames {
		if r.name == s {
			return r.role, true
		}
	}
	return 0, false
}

// parseRoles turns the "roles" claim into a set. Unknown names are ignored:
// they grant nothing, so ignoring them fails closed, and a token issuer may
// add a role that a later gateway understands without breaking this one.
func parseRoles(names []string) Role {
	var set Role
	for _, s := range names {
		r, _ := ParseRole(s)
		set |= r
	}
	return set
}

// names returns the names of the roles in r, in the order read, submit, admin.
func (r Role) names() []string {
	var out []string
	for _, n := range roleNames {
		if r&n.role != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// String returns the role names joined by "|", or "none".
func (r Role) String() string {
	if r == 0 {
		return "none"
	}
	return strings.Join(r.names(), "|")
}

// Scope is what a verified token allows: one tenant, a subject, roles and
// board patterns. A Scope is a value; its methods only read it and are safe
// for concurrent use.
type Scope struct {
	Tenant  string // the tnt claim; always a key's tenant
	Kid     string // the key that verified the token (the header's kid)
	Subject string // the sub claim: the player's member id; empty where absent
	Roles   Role   // granted roles as written; Can applies admin's implications
	// Boards are glob patterns ('*' matches any run of characters) limiting
	// the boards the token reaches. Nil (claim absent or null) means every
	// board; an empty, non-nil list (claim []) means none.
	Boards []string
	Expiry time.Time // the exp claim
}

// Can reports whether s grants every role in role. RoleAdmin implies RoleRead
// and RoleSubmit. The zero Role is never granted. O(1).
func (s Scope) Can(role Role) bool {
	have := s.Roles
	if have&RoleAdmin != 0 {
		have |= RoleRead | RoleSubmit
	}
	return role != 0 && have&role == role
}

// CanBoard reports whether any of s's board patterns matches name, or s has
// none (every board). O(total pattern length + len(name)) for the usual
// one-star patterns; no allocation.
func (s Scope) CanBoard(name string) bool {
	if s.Boards == nil {
		return true
	}
	for _, p := range s.Boards {
		if matchGlob(p, name) {
			return true
		}
	}
	return false
}

// Allows returns nil if s grants role on board, else an error wrapping ErrRole
// or ErrBoard (both ErrForbidden). board is assumed to be a validated board
// name: it appears in the message.
func (s Scope) Allows(role Role, board string) error {
	if !s.Can(role) {
		return fmt.Errorf("%w: token lacks role %s", ErrRole, role)
	}
	if !s.CanBoard(board) {
		return fmt.Errorf("%w: token does not reach board %q", ErrBoard, board)
	}
	return nil
}
