package faults

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Flap is a run of counted non-200 answers of one healthy node's /readyz
// (readyPoller): consecutive probes of the same node whose reasons have
// the same shape (shape) make one Flap, so that a table can say why a
// healthy node was not ready, not only for how long.
type Flap struct {
	Node   string
	At     time.Duration // the first probe's, since the load started
	Probes int           // consecutive probes in it
	Reason string        // the first probe's reason: /readyz's body, or why no answer came
}

// String is the flap for a run's line: node, offset, count and reason.
func (f Flap) String() string {
	return fmt.Sprintf("%s +%.1fs ×%d: %s", f.Node, f.At.Seconds(), f.Probes, f.Reason)
}

// numbers matches the figures a reason carries (durations, counts), which
// differ between probes of the same cause.
var numbers = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// shape is reason with every figure replaced by #: the reasons of one
// cause share it.
func shape(reason string) string { return numbers.ReplaceAllString(reason, "#") }

// addFlap records one counted non-200 answer of node at at into flaps,
// extending the last flap where it is node's last probe with the same
// shape, and returns flaps.
func addFlap(flaps []Flap, node string, at time.Duration, reason string, consecutive bool) []Flap {
	if n := len(flaps); n > 0 && consecutive && shape(flaps[n-1].Reason) == shape(reason) {
		flaps[n-1].Probes++
		return flaps
	}
	return append(flaps, Flap{Node: node, At: at, Probes: 1, Reason: reason})
}

// reasonSummary is the reasons of flaps by shape, most probes first, each
// as its first text with the probes and runs of its shape, for the table:
// "3 probes in 2 runs: <reason>". Pipes are escaped for Markdown.
func reasonSummary(runs [][]Flap) string {
	type agg struct {
		first        string
		probes, runs int
	}
	byShape := map[string]*agg{}
	var order []string
	for _, flaps := range runs {
		seen := map[string]bool{}
		for _, f := range flaps {
			k := shape(f.Reason)
			a := byShape[k]
			if a == nil {
				a = &agg{first: f.Reason}
				byShape[k] = a
				order = append(order, k)
			}
			a.probes += f.Probes
			if !seen[k] {
				seen[k] = true
				a.runs++
			}
		}
	}
	if len(order) == 0 {
		return "none"
	}
	slices.SortStableFunc(order, func(a, b string) int { return byShape[b].probes - byShape[a].probes })
	parts := make([]string, len(order))
	for i, k := range order {
		a := byShape[k]
		parts[i] = fmt.Sprintf("%d probes in %d runs: %s", a.probes, a.runs, strings.ReplaceAll(a.first, "|", `\|`))
	}
	return strings.Join(parts, "; ")
}
