package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/rankwire/rankwire/internal/clusterops"
)

// adminSocket is the name, in the data directory, of the Unix socket
// where a node of an embedded cluster answers `gateway cluster` (peers,
// remove). Whoever may open the data directory runs the node; nobody
// else reaches the socket (mode 0600 in a directory of the node's user),
// and it is no TCP port: no token, tenant or admin, can reach it.
const adminSocket = "cluster.sock"

// adminTimeout bounds one admin request's work on the cluster.
const adminTimeout = 10 * time.Second

// peersAnswer is GET /peers's body.
type peersAnswer struct {
	Node  string            `json:"node"` // the node that answered
	Peers []clusterops.Peer `json:"peers"`
}

// serveClusterAdmin serves the admin socket of dataDir with sys, until the
// returned stop. A socket left by a node that died is replaced: the data
// directory's lock (datalock.go) says no other node runs on it.
func serveClusterAdmin(dataDir, self string, sys *clusterSystem, log *slog.Logger) (func(), error) {
	path := filepath.Join(dataDir, adminSocket)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cluster admin socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cluster admin socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cluster admin socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /peers", func(w http.ResponseWriter, r *http.Request) { answerPeers(w, r, self, sys) })
	mux.HandleFunc("POST /remove", func(w http.ResponseWriter, r *http.Request) { answerRemove(w, r, self, sys, log) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends at stop's Close
	return func() {
		_ = srv.Close()
		_ = os.Remove(path)
	}, nil
}

// answerPeers writes the meta group's peers as its leader sees them.
func answerPeers(w http.ResponseWriter, r *http.Request, self string, sys *clusterSystem) {
	ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
	defer cancel()
	peers, err := clusterops.Peers(ctx, sys.nc)
	if err != nil {
		http.Error(w, err.Error(), adminStatus(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(peersAnswer{Node: self, Peers: peers})
}

// answerRemove removes the departed peer ?node= from the meta group and
// tells every node's reach (removedSubject).
func answerRemove(w http.ResponseWriter, r *http.Request, self string, sys *clusterSystem, log *slog.Logger) {
	name := r.URL.Query().Get("node")
	if name == "" {
		http.Error(w, "node: the peer's name is required", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
	defer cancel()
	if err := clusterops.RemovePeer(ctx, sys.nc, self, name); err != nil {
		log.Warn("cluster peer not removed", "peer", name, "err", err)
		http.Error(w, err.Error(), adminStatus(err))
		return
	}
	log.Info("cluster peer removed", "peer", name)
	// Every node's reach stops counting it (peers.go); a node that misses
	// the note forgets it after reach.Forget.
	if err := sys.nc.Publish(removedSubject, []byte(name)); err != nil {
		log.Warn("cluster peer removal not announced to the nodes' reach", "peer", name, "err", err)
	}
	w.WriteHeader(http.StatusNoContent)
}

// adminStatus is the HTTP status of an admin request's error.
func adminStatus(err error) int {
	switch {
	case errors.Is(err, clusterops.ErrPeerOnline), errors.Is(err, clusterops.ErrPeerSelf):
		return http.StatusConflict
	case errors.Is(err, clusterops.ErrPeerUnknown):
		return http.StatusNotFound
	case errors.Is(err, clusterops.ErrNoMetaLeader):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
