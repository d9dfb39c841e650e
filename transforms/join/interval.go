package join

// This file holds Interval, the interval join composite. Its DoFns are in
// interval_fn.go, its timer policy in interval_timer.go, its default state
// layout in interval_state.go, the split layout in interval_split*.go;
// docs/design/interval.md explains how it runs.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// Interval joins left, a PCollection<KV<K,L>>, with right, a
// PCollection<KV<K,R>>: a left element l and a right element r with the
// same key match iff lower <= ts(r) - ts(l) <= upper, with the bounds given
// by Between. Outputs.Records is a PCollection<Result[K,L,R]>, and
// Outputs.Late a PCollection<LateElement[K,L,R]> of the elements judged
// late.
//
//	out := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
//
// The left element is always the reference, whichever arrives first, so the
// pairs depend only on which elements are present, never on arrival order.
// The join type (Inner, the default, LeftOuter, RightOuter, FullOuter) says
// which elements without a partner are reported, the emission mode
// (EmitImmediate, the default, EmitFinal, EmitRetract) when. LowerExclusive
// and UpperExclusive exclude an end of the bounds; AllowedLateness keeps
// elements longer; CleanupEvery, SplitKeys and MaxBufferedPerKey tune
// cost and memory; UniqueLeft, for a left keyed by its own id, buffers
// fewer right elements; TrackFates adds Outputs.Fates, one Fate per
// input element.
//
// When both inputs are bounded (files read whole, beam.Create) the join
// takes its bounded-input path by itself (see Bounded): the same records
// as the streaming path gives on a stream, at a few state calls per key
// rather than per element. Streaming keeps the streaming path; Bounded
// takes the bounded one for an unbounded input that ends.
//
// A left element can be matched until event time passes
// ts + max(upper, 0) + allowed lateness, a right one until
// ts + max(-lower, 0) + allowed lateness; then it is removed and, under
// EmitFinal, reported unmatched if it is on an outer side and never
// matched. An element is late iff one of its potential partners may
// already have been removed on its key; late elements go to Outputs.Late,
// neither joined nor buffered. One no more than the allowed lateness
// behind the watermark is never late, so no pair is lost at the cleanup
// boundary. EmitFinal and EmitRetract records carry the element's own
// timestamp and are never late downstream: the join holds the output
// watermark for them. Both inputs must be windowed alike; the join runs in
// the global window, so pairs straddling window boundaries are found, and
// gives its outputs back the inputs' windowing. docs/design/interval.md
// gives the state, timers, costs and the limits of lateness.
//
// The program must call RegisterTypes[K, L, R]() in an init function.
// Interval panics on misuse with a clear message; TryInterval returns the
// error.
func Interval[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) Outputs {
	out, err := TryInterval[K, L, R](s, left, right, opts...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryInterval is Interval returning an error instead of panicking: for
// options Interval does not take or that no pair can satisfy (see
// Route.Check), for inputs that are not PCollections of KV pairs with the
// type arguments' key and value types, and for types not registered with
// RegisterTypes.
func TryInterval[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (Outputs, error) {
	const op = "join.Interval"
	s = s.Scope(op)
	cfg, err := intervalConfig(withInputs(opts, left, right))
	if err != nil {
		return Outputs{}, err
	}
	in, err := tagEventTime[K, L, R](s, op, left, right)
	if err != nil {
		return Outputs{}, err
	}
	var records, late, tagged beam.PCollection
	if !cfg.bounded { // the bounded path flattens its gathered sides
		if tagged, err = raw.Flatten(s, op, in.Sides); err != nil {
			return Outputs{}, err
		}
	}
	switch {
	case cfg.bounded:
		records, late, err = joinBounded(s.Scope("bounded"), op, cfg, in.Key, in.Sides)
	case cfg.split:
		records, late = joinSplit(s.Scope("split"), cfg, in.Key, tagged)
	default:
		records, late = beam.ParDo2(s, statefulFn(newJoiner(cfg, in.Key)), tagged)
	}
	if err != nil {
		return Outputs{}, err
	}
	if !cfg.trackFates {
		return in.outputs(s, records, late, cfg.lateness), nil
	}
	records, fates, err := intervalFates[K, L, R](s, records)
	if err != nil {
		return Outputs{}, err
	}
	out := in.outputs(s, records, late, cfg.lateness)
	out.Fates = fates
	return out, nil
}

// newJoiner is the default layout's joiner of a join with config cfg and
// key coder key: the interval join's DoFn carries it, and the runner-model
// harness (model_harness_test.go) builds its DoFns through it too.
func newJoiner(cfg config, key coders.Element) joiner {
	j := joiner{
		Rules:        cfg.rules(),
		MaxBuffered:  cfg.maxBuffered,
		CleanupEvery: cfg.cleanupMillis(),
		Key:          key,
		NoCache:      cfg.noCache,
		Horizon:      cfg.horizon.Milliseconds(),
		CacheBytes:   cfg.cacheBytes,
		Fates:        cfg.trackFates,
		UniqueLeft:   cfg.uniqueLeft,
	}
	j.AppendCleanup = !cfg.noAppendCleanup && appendable(j.Rules)
	return j
}

// statefulFn is the default layout's stateful DoFn of j.
func statefulFn(j joiner) *intervalFn {
	return &intervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup")}
}
