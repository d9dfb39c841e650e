package join

import (
	"fmt"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/interval"
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
	var entries []match.Entry[[]byte]
	for _, e := range elements {
		entries = append(entries, match.Entry[[]byte]{Side: e.Side.core(), Time: e.Time, Value: []byte(e.Value)})
	}
	side := func(has bool, v []byte, t int64) string {
		if !has {
			return "-"
		}
		return fmt.Sprintf("%s@%d", v, t)
	}
	var peak int
	out := interval.Sweep(cfg.interval(), entries,
		func(ts int64, r raw.Record) {
			records = append(records, fmt.Sprintf("%v %s %s t=%d", r.Kind, side(r.HasLeft, r.Left, r.LeftTime), side(r.HasRight, r.Right, r.RightTime), ts))
		},
		func(e match.Entry[[]byte]) {
			late = append(late, fmt.Sprintf("late %v %s@%d", sideOf(e.Side), e.Value, e.Time))
		},
		func(n int) { peak = max(peak, n) })

	counts = map[string]int64{}
	add := func(name string, n int64) {
		if n != 0 {
			counts[name] += n
		}
	}
	for _, s := range []Side{Left, Right} {
		add(s.String()+"_in", out.In[s])
		add(s.String()+"_unmatched_out", out.UnmatchedOut[s])
		for f, n := range out.Fate[s] {
			add(s.String()+"_"+match.Fate(f).String(), n)
		}
	}
	add("pairs_out", out.Pairs)
	add("retractions_out", out.Retracted)
	add("buffered", out.Buffered-out.Removes)
	add("buffered_per_key", int64(peak))
	return records, late, counts, nil
}
