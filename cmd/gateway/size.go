package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// minStore is the smallest --max-store accepted: below it JetStream could
// not hold a tenant's stream and snapshot bookkeeping for long.
const minStore = 1 << 20

// sizeUnits are the units parseSize takes, case-insensitively: decimal
// (KB = 1000 bytes) and binary (KiB = 1024 bytes). Longest first, so that
// "KiB" is not read as a number ending in "B".
var sizeUnits = []struct {
	name string
	mult float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"b", 1},
}

// parseSize reads a byte size such as "50GB", "1.5 GiB", "1048576" or
// "512MiB": a non-negative number and an optional unit. "" is 0 (the
// default). The result must fit an int64.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, nil
	}
	mult := 1.0
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.name); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) || strings.ContainsAny(t, "eEnNxXpP_") {
		return 0, fmt.Errorf("%q is not a size such as 50GB, 512MiB or 1048576", s)
	}
	v := n * mult
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v), nil
}
