package join

import (
	"fmt"
	"maps"
	"slices"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// SweepElement is one element of a key for Sweep.
type SweepElement struct {
	Side  Side
	Time  int64 // event time, ms
	Value string
}

// Sweep runs the bounded path's sweeps of one key over elements, given in
// any order, under the interval options opts: the elements are placed in
// buckets as the pipeline places them (BoundedBucket) and each bucket's
// group is swept alone, in order of the buckets. It returns the records the
// sweep emits, each written "kind left@time right@time t=time" with "-"
// for an absent side, the late elements written "late side value@time",
// and the counts the sweep reports, by counter name; buffered_per_key is
// the largest buffered count it recorded.
func Sweep(elements []SweepElement, opts ...Option) (records, late []string, counts map[string]int64, err error) {
	cfg, err := intervalConfig(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	buckets := cfg.boundedBuckets()
	groups := map[int64][]match.Entry[[]byte]{}
	for _, e := range elements {
		first, last := buckets.Placement(e.Time)
		for b := first; b <= last; b++ {
			groups[b] = append(groups[b], match.Entry[[]byte]{Side: e.Side.core(), Time: e.Time, Value: []byte(e.Value)})
		}
	}
	side := func(has bool, v []byte, t int64) string {
		if !has {
			return "-"
		}
		return fmt.Sprintf("%s@%d", v, t)
	}
	var peak int
	var owner int64
	out := sweepOutput{
		owns: func(t int64) bool { return buckets.Owns(owner, t) },
		record: func(ts int64, r raw.Record) {
			records = append(records, fmt.Sprintf("%v %s %s t=%d", r.Kind, side(r.HasLeft, r.Left, r.LeftTime), side(r.HasRight, r.Right, r.RightTime), ts))
		},
		late: func(e match.Entry[[]byte]) {
			late = append(late, fmt.Sprintf("late %v %s@%d", sideOf(e.Side), e.Value, e.Time))
		},
		bufferedAt: func(n int) { peak = max(peak, n) },
	}
	for _, b := range slices.Sorted(maps.Keys(groups)) {
		owner = b
		sweeper{Rules: cfg.rules(), MaxBuffered: cfg.maxBuffered, CleanupEvery: cfg.cleanupMillis()}.sweep(groups[b], &out)
	}

	counts = map[string]int64{}
	add := func(name string, n int64) {
		if n != 0 {
			counts[name] += n
		}
	}
	for _, s := range []Side{Left, Right} {
		add(s.String()+"_in", out.in[s])
		add(s.String()+"_unmatched_out", out.unmatchedOut[s])
		for f, n := range out.fate[s] {
			add(s.String()+"_"+match.Fate(f).String(), n)
		}
	}
	add("pairs_out", out.pairs)
	add("retractions_out", out.retracted)
	add("buffered", out.buffered-out.removes)
	add("buffered_per_key", int64(peak))
	return records, late, counts, nil
}
