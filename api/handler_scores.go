package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// scoreJSON is one submission as the api decodes it (wire.Score is what
// clients send). Member and Score are pointers so that a missing field is
// told apart from an empty or zero one: wire.Score cannot, and must not
// make the SDK's callers write pointers.
type scoreJSON struct {
	Member   *string  `json:"member"`
	Score    *float64 `json:"score"`
	Subscore float64  `json:"subscore"`
	ID       string   `json:"id"`
}

// submitJSON is one submission, or a batch under "scores".
type submitJSON struct {
	scoreJSON
	Scores []scoreJSON `json:"scores"`
}

// submit takes one submission or a batch, validated whole, and answers once
// the batch is durable and applied.
func (s *Server) submit(w http.ResponseWriter, r *http.Request) error {
	name, err := boardFor(r, auth.RoleSubmit)
	if err != nil {
		return err
	}
	var body submitJSON
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	items, err := body.items()
	if err != nil {
		return err
	}
	tenant := scopeOf(r).Tenant
	if err := s.limits.allow(tenant, len(items)); err != nil {
		return err
	}
	var results []hub.Result
	if err := s.fresh.Write(r.Context(), tenant, func() (err error) {
		results, err = s.hub.Submit(r.Context(), tenant, name, items)
		return err
	}); err != nil {
		return err
	}
	s.metrics.countResults(results)
	writeJSON(w, http.StatusOK, wire.Results{Results: toResults(results)})
	return nil
}

// items checks the body's shape and returns its submissions.
func (b *submitJSON) items() ([]hub.Item, error) {
	single := b.Member != nil || b.Score != nil || b.ID != "" || b.Subscore != 0
	switch {
	case b.Scores != nil && single:
		return nil, badRequest("body: send either one submission or \"scores\", not both")
	case b.Scores == nil:
		it, err := b.scoreJSON.item(-1)
		return []hub.Item{it}, err
	case len(b.Scores) == 0 || len(b.Scores) > hub.MaxBatch:
		return nil, badRequest("scores: %d items, want 1..%d", len(b.Scores), hub.MaxBatch)
	}
	items := make([]hub.Item, len(b.Scores))
	for i, sc := range b.Scores {
		var err error
		if items[i], err = sc.item(i); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// item is sc as the hub takes it; i is its index in "scores", or -1 for
// a single submission (the JSON path's prefix, built only for a refusal).
func (sc scoreJSON) item(i int) (hub.Item, error) {
	prefix := func() string {
		if i < 0 {
			return ""
		}
		return fmt.Sprintf("scores[%d].", i)
	}
	switch {
	case sc.Member == nil:
		return hub.Item{}, badRequest("%smember: required", prefix())
	case sc.Score == nil:
		return hub.Item{}, badRequest("%sscore: required, a finite number", prefix())
	case len(sc.ID) > hub.MaxIDLen:
		return hub.Item{}, badRequest("%sid: %d bytes, at most %d", prefix(), len(sc.ID), hub.MaxIDLen)
	}
	return hub.Item{Member: *sc.Member, Score: *sc.Score, Subscore: sc.Subscore, ID: sc.ID}, nil
}

// toResults is rs as the protocol shows them.
func toResults(rs []hub.Result) []wire.Result {
	out := make([]wire.Result, len(rs))
	for i, r := range rs {
		out[i] = wire.Result{Member: r.Member, Score: r.Score, Subscore: r.Subscore, Rank: r.Rank,
			Applied: r.Applied, Duplicate: r.Duplicate, Seq: r.Seq}
		if r.Reason != hub.ReasonNone {
			out[i].Quarantined, out[i].Reason = r.Reason != hub.ReasonFull, r.Reason.String()
		}
		if r.QID != 0 {
			out[i].QID = strconv.FormatUint(r.QID, 10)
		}
	}
	return out
}
