package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is stamped at build time:
//
//	go build -ldflags "-X main.version=v1.2.0" ./cmd/gateway
//
// Without it, the module version or the VCS revision Go records is shown.
var version = "dev"

// versionString describes the binary: its version, the commit it was built
// from where Go recorded one, and the Go release.
func versionString() string {
	v, rev, dirty := version, "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	out := "rankwire gateway " + v
	if rev != "" {
		out += fmt.Sprintf(" (commit %.12s", rev)
		if dirty {
			out += ", modified"
		}
		out += ")"
	}
	return out + " " + runtime.Version()
}
