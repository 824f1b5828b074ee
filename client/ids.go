package client

import (
	"crypto/rand"

	"github.com/rankwire/rankwire/wire"
)

// idPrefix marks the ids the SDK made up, for whoever reads the log.
const idPrefix = "sdk-"

// withIDs returns the submission of scores, with a random ID on each score
// without one, and which scores got one (nil where none did or the Client
// makes none). The caller's slice is not changed.
func (c *Client) withIDs(scores []Score) (wire.Submission, []bool) {
	if c.noIDs || allHaveIDs(scores) {
		return wire.Submission{Scores: scores}, nil
	}
	out := make([]Score, len(scores))
	generated := make([]bool, len(scores))
	for i, s := range scores {
		if s.ID == "" {
			s.ID, generated[i] = idPrefix+rand.Text(), true // 130 random bits: never shared
		}
		out[i] = s
	}
	return wire.Submission{Scores: out}, generated
}

// allHaveIDs reports whether every score carries an ID: a repeat of them
// applies once.
func allHaveIDs(scores []Score) bool {
	for _, s := range scores {
		if s.ID == "" {
			return false
		}
	}
	return true
}
