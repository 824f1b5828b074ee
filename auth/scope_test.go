package auth_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rankwire/rankwire/auth"
)

func TestScopeCan(t *testing.T) {
	const all = auth.RoleRead | auth.RoleSubmit | auth.RoleAdmin
	tests := []struct {
		name  string
		roles auth.Role
		want  [3]bool // Can(read), Can(submit), Can(admin)
	}{
		{"none", 0, [3]bool{}},
		{"read", auth.RoleRead, [3]bool{true, false, false}},
		{"submit", auth.RoleSubmit, [3]bool{false, true, false}},
		{"read and submit", auth.RoleRead | auth.RoleSubmit, [3]bool{true, true, false}},
		{"admin implies read and submit", auth.RoleAdmin, [3]bool{true, true, true}},
		{"all", all, [3]bool{true, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := auth.Scope{Roles: tc.roles}
			got := [3]bool{s.Can(auth.RoleRead), s.Can(auth.RoleSubmit), s.Can(auth.RoleAdmin)}
			if got != tc.want {
				t.Errorf("Can(read, submit, admin) = %v, want %v", got, tc.want)
			}
			if s.Can(0) {
				t.Error("Can(0) = true")
			}
			if want := tc.want[0] && tc.want[1]; s.Can(auth.RoleRead|auth.RoleSubmit) != want {
				t.Errorf("Can(read|submit) = %v, want %v", !want, want)
			}
		})
	}
}

func TestScopeCanBoard(t *testing.T) {
	tests := []struct {
		name   string
		boards []string
		board  string
		want   bool
	}{
		{"absent means every board", nil, "weekly", true},
		{"empty means none", []string{}, "weekly", false},
		{"exact", []string{"weekly"}, "weekly", true},
		{"exact, other board", []string{"weekly"}, "weekly-2", false},
		{"prefix glob", []string{"slots-*"}, "slots-daily", true},
		{"prefix glob, empty rest", []string{"slots-*"}, "slots-", true},
		{"prefix glob, other board", []string{"slots-*"}, "poker-daily", false},
		{"second pattern", []string{"slots-*", "*-weekly"}, "poker-weekly", true},
		{"star alone", []string{"*"}, "anything", true},
		{"no pattern matches", []string{"a*", "b*"}, "c", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (auth.Scope{Boards: tc.boards}).CanBoard(tc.board); got != tc.want {
				t.Errorf("CanBoard(%q) with %q = %v, want %v", tc.board, tc.boards, got, tc.want)
			}
		})
	}
}

func TestScopeAllows(t *testing.T) {
	player := auth.Scope{Tenant: "casino-a", Roles: auth.RoleRead, Boards: []string{"slots-*"}}
	operator := auth.Scope{Tenant: "casino-a", Roles: auth.RoleAdmin}
	tests := []struct {
		name  string
		scope auth.Scope
		role  auth.Role
		board string
		want  error
	}{
		{"player reads its board", player, auth.RoleRead, "slots-weekly", nil},
		{"player may not submit", player, auth.RoleSubmit, "slots-weekly", auth.ErrRole},
		{"player may not reach other boards", player, auth.RoleRead, "poker", auth.ErrBoard},
		{"role is checked before board", player, auth.RoleAdmin, "poker", auth.ErrRole},
		{"admin submits anywhere", operator, auth.RoleSubmit, "poker", nil},
		{"admin reads anywhere", operator, auth.RoleRead, "slots-weekly", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.scope.Allows(tc.role, tc.board)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Allows = %v, want %v", err, tc.want)
			}
			if err != nil && (!errors.Is(err, auth.ErrForbidden) || errors.Is(err, auth.ErrUnauthorized)) {
				t.Errorf("%v is not forbidden-only", err)
			}
		})
	}
}

func TestRoleString(t *testing.T) {
	tests := []struct {
		name string
		role auth.Role
		want string
	}{
		{"none", 0, "none"},
		{"read", auth.RoleRead, "read"},
		{"submit", auth.RoleSubmit, "submit"},
		{"admin", auth.RoleAdmin, "admin"},
		{"set", auth.RoleAdmin | auth.RoleRead, "read|admin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.role.String(); got != tc.want {
				t.Errorf("String = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseRole(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want auth.Role
		ok   bool
	}{
		{"read", "read", auth.RoleRead, true},
		{"submit", "submit", auth.RoleSubmit, true},
		{"admin", "admin", auth.RoleAdmin, true},
		{"empty", "", 0, false},
		{"case matters", "Admin", 0, false},
		{"none is not a role", "none", 0, false},
		{"unknown", "superuser", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := auth.ParseRole(tc.in); got != tc.want || ok != tc.ok {
				t.Errorf("ParseRole(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestKeysDoNotPrintSecrets(t *testing.T) {
	f := loadFixture()
	key, _ := f.keys.Key("a-hs")
	sk, _ := f.keys.SigningKey("a-hs")
	for _, s := range []string{fmt.Sprint(key), fmt.Sprintf("%+v", key), fmt.Sprint(sk), fmt.Sprintf("%+v", sk)} {
		if s != `HS256 key "a-hs" of tenant "casino-a"` && s != `HS256 signing key "a-hs"` {
			t.Errorf("printed as %q", s)
		}
	}
}
