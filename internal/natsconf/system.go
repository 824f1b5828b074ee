package natsconf

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// SystemUser is the user of the embedded cluster's system account: the
// gateway's own in-process connection for the JetStream operations only
// the system account may ask for (the meta leader's step-down, removing a
// departed peer). It has no password anyone else knows (Cluster.System,
// random per process) and nats-server refuses it on every connection that
// is not in-process, so no client of --nats-listen or of a route can be it.
const SystemUser = "rankwire-system"

// SystemAccount is the name of the system account. It is nats-server's
// default one, which every clustered node has had all along: JetStream
// keeps the meta group's and the streams' Raft logs under the system
// account's name (<store>/jetstream/$SYS/_js_/...), so another name would
// orphan them.
const SystemAccount = server.DEFAULT_SYSTEM_ACCOUNT

// NewSystemPassword returns a random password for Cluster.System: 32
// bytes from crypto/rand, in hex. A process makes one at start and keeps
// it in memory only.
func NewSystemPassword() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("natsconf: system password: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// authBlock marks the options as holding their own authorization, as a
// configuration file's authorization block does. Without it nats-server,
// seeing a system account beside the global account and no other,
// assumes a configuration that only added a system user and lets every
// client without credentials in as a password-less user of the global
// account (server.configureAccounts: "no-auth-user for $G"). The mark can
// only be set by parsing: the field is unexported.
const authBlock = "authorization {}"

// systemAccountOptions declares the system account and its one user,
// SystemUser, beside ClientUser on the global account, where the tenants'
// streams are. Only these two accounts exist, so nats-server enables
// JetStream for the global account as it did with no account declared
// (server.globalAccountOnly), with the same store paths. Every connection
// must authenticate: there is no user without a password.
func systemAccountOptions(opts *server.Options, c Cluster) error {
	if err := opts.ProcessConfigString(authBlock); err != nil {
		return fmt.Errorf("%w: authorization: %v", ErrClusterConfig, err)
	}
	pass := c.System
	if pass == "" { // nobody asked for the system account: a password no one knows
		var err error
		if pass, err = NewSystemPassword(); err != nil {
			return fmt.Errorf("%w: %v", ErrClusterConfig, err)
		}
	}
	sys := server.NewAccount(SystemAccount)
	opts.Accounts, opts.SystemAccount = []*server.Account{sys}, SystemAccount
	opts.Users = []*server.User{
		{Username: ClientUser, Password: ClientPassword(c.Secret)}, // no account: the global one
		{Username: SystemUser, Password: pass, Account: sys,
			AllowedConnectionTypes: map[string]struct{}{connInProcess: {}}},
	}
	opts.Username, opts.Password = "", ""
	return nil
}

// connInProcess is nats-server's name of the in-process connection type
// (jwt.ConnectionTypeInProcess; nats-server refuses names it does not
// know, and TestSystemUserInProcessOnly shows this one is known).
const connInProcess = "IN_PROCESS"

// SystemAuth is the nats.go option that authenticates an in-process
// connection to the embedded server as SystemUser with c.System.
func SystemAuth(c Cluster) nats.Option { return nats.UserInfo(SystemUser, c.System) }
