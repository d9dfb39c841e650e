package join

// This file holds the as-of join's bounded-input path (the Bounded
// option): each bundle's elements of each side are gathered by key as for
// Interval (gatherFn, gatherSides), grouped with a GroupByKey, and each
// key's left elements are joined with its versions in memory by the same
// rules as the streaming path, with no state or timers.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn5x1[context.Context, beam.X, func(*[]timed) bool,
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
	raw, rawLate = beam.ParDo2(s, &asofSweepFn{Rules: rules}, beam.GroupByKey(s, gathered))
	return raw, rawLate, nil
}

// asofSweepFn joins one key's grouped elements: every version is known,
// so each left element's record is final at once. The records are those
// of the streaming path, under EmitFinal, for any arrival order in which
// nothing is late; under EmitRetract too, since with every version known
// no record needs retracting.
type asofSweepFn struct {
	Rules asofRules
}

func (f *asofSweepFn) ProcessElement(ctx context.Context, key beam.X, values func(*[]timed) bool,
	emit func(beam.EventTime, beam.X, record), _ func(beam.EventTime, beam.X, encoded)) error {
	k := newAsofKey()
	final := f.Rules
	final.Retract = false
	var lefts []asofEntry
	var in [2]int64
	var superseded int64
	var ts []timed
	for values(&ts) {
		for _, t := range ts {
			e := asofEntry{Time: t.Time, Value: t.Value}
			switch Side(t.Side) {
			case Left:
				lefts = append(lefts, e)
			case Right:
				if kept, _ := k.addVersion(final, e); !kept {
					superseded++
				}
			default:
				return fmt.Errorf("beamjoin: join.AsOf: grouped element of unknown side %d", t.Side)
			}
			in[t.Side]++
		}
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
	return nil
}
