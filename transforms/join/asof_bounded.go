package join

// This file holds the as-of join's bounded-input path (the Bounded
// option): each bundle's elements of each side are gathered by key as for
// Interval (gatherFn, gatherSides), collected in state until the input is
// done (boundedGroups, eventtime_bounded.go), and then each key's left
// elements are joined with its versions in memory by the same rules as
// the streaming path.

import (
	"context"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

func init() {
	register.DoFn7x1[context.Context, state.Provider, timers.Provider, beam.X, []timed,
		func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded), error](&asofSweepFn{})
}

// asofBounded is the bounded path: sides, each side's tagged
// PCollection<KV<K, encoded>>, become the join's records and its (empty)
// late elements, the PCollections the streaming path's DoFn produces. op
// names the join in errors.
func asofBounded(s beam.Scope, op string, rules asofRules, sides [2]beam.PCollection) (raw, rawLate beam.PCollection, err error) {
	gathered, err := gatherSides(s, op, sides, func() any { return &gatherFn{Hold: gatherBytes} })
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	fn := &asofSweepFn{Rules: rules}
	fn.Groups, fn.Release = newBoundedState()
	raw, rawLate = beam.ParDo2(s, fn, gathered)
	return raw, rawLate, nil
}

// asofSweepFn joins one key's elements once the input is done: it
// collects each gathered part of the key in state (boundedGroups), and the
// firing that releases them joins them. Every version is known then, so
// each left element's record is final at once. The records are those of
// the streaming path, under EmitFinal, for any arrival order in which
// nothing is late; under EmitRetract too, since with every version known
// no record needs retracting.
type asofSweepFn struct {
	Rules asofRules
	// Groups and Release collect the key's elements (boundedGroups).
	Groups  state.Bag[[]byte]
	Release timers.EventTime
}

func (f *asofSweepFn) ProcessElement(_ context.Context, sp state.Provider, tp timers.Provider, _ beam.X, values []timed,
	_ func(beam.EventTime, beam.X, record), _ func(beam.EventTime, beam.X, encoded)) error {
	return groupsOf(&f.Groups, &f.Release).add("join.AsOf", sp, tp, values)
}

func (f *asofSweepFn) OnTimer(ctx context.Context, sp state.Provider, tp timers.Provider, key beam.X, tc timers.Context,
	emit func(beam.EventTime, beam.X, record), _ func(beam.EventTime, beam.X, encoded)) error {
	entries, ok, err := groupsOf(&f.Groups, &f.Release).release("join.AsOf", sp, tc.Tag)
	if !ok || err != nil {
		return err
	}
	f.join(ctx, key, entries, emit)
	return nil
}

// join joins a key's entries and emits the records.
func (f *asofSweepFn) join(ctx context.Context, key beam.X, entries []match.Entry[[]byte], emit func(beam.EventTime, beam.X, record)) {
	k := newAsofKey()
	final := f.Rules
	final.Retract = false
	var lefts []asofEntry
	var in [2]int64
	var superseded int64
	for _, t := range entries {
		e := asofEntry{Time: t.Time, Value: t.Value}
		if t.Side == match.Left {
			lefts = append(lefts, e)
		} else if kept, _ := k.addVersion(final, e); !kept {
			superseded++
		}
		in[t.Side]++
	}
	slices.SortFunc(lefts, compareEntries)
	var pairs, unmatched int64
	for _, l := range lefts {
		v, ok := f.Rules.match(k.Versions, l.Time)
		if r, emitted := asofRecord(f.Rules, KindPair, l, v, ok); emitted {
			emit(beam.EventTime(l.Time), key, r)
			if ok {
				pairs++
			} else {
				unmatched++
			}
		}
	}
	for s, n := range in {
		if n > 0 {
			counters.in[s].Inc(ctx, n)
		}
	}
	if pairs > 0 {
		counters.pairs.Inc(ctx, pairs)
	}
	if unmatched > 0 {
		counters.unmatchedOut[Left].Inc(ctx, unmatched)
	}
	if superseded > 0 {
		asofCounters.superseded.Inc(ctx, superseded)
	}
}
