package join

// This file holds Interval, the interval join composite. Its DoFns are in
// interval_fn.go, its timer policy in interval_timer.go, its state layouts
// in interval_state.go; the package documentation explains how it runs.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
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
// Inner (the default), LeftOuter, RightOuter and FullOuter choose which
// elements without a partner are reported; EmitImmediate (the default),
// EmitFinal and EmitRetract choose when. LowerExclusive and UpperExclusive
// exclude an end of the bounds; AllowedLateness keeps elements longer, for
// data behind the watermark; CleanupEvery, HotKeyBuckets and
// MaxBufferedPerKey tune cost and memory; Bounded runs the bounded-input
// path; TrackFates adds Outputs.Fates, one Fate per input element.
//
// A left element can be matched until event time passes
// ts + max(upper, 0) + allowed lateness, a right element until
// ts + max(-lower, 0) + allowed lateness; then it is removed and, under
// EmitFinal, reported unmatched if it is on an outer side and never matched.
// EmitFinal and EmitRetract records carry the element's own timestamp and
// are never late downstream: the join holds the output watermark for them.
//
// An element is late iff one of its potential partners may already have
// been removed on its key; late elements are neither joined nor buffered,
// but go to Outputs.Late. An element not behind the watermark by more than
// the allowed lateness is never late, so no pair is lost at the cleanup
// boundary. The package documentation's "Late data in Interval" says what
// the join cannot know.
//
// The join is defined in event time, not per window. Inputs may be windowed
// in any way, as long as both are windowed alike: the join moves them into
// the global window, so a pair straddling a window boundary is found, and
// gives its records and late elements back the inputs' windowing, each
// assigned to windows by its own timestamp (under sliding windows each
// input element is still joined once).
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
	cfg, err := intervalConfig(opts)
	if err != nil {
		return Outputs{}, err
	}
	in, err := tagEventTime[K, L, R](s, op, left, right)
	if err != nil {
		return Outputs{}, err
	}
	var raw, rawLate beam.PCollection
	if cfg.bounded {
		raw, rawLate = joinBounded(s.Scope("bounded"), cfg, in.Tagged)
	} else {
		raw, rawLate = beam.ParDo2(s, statefulFn(newJoiner(cfg, in.Key)), in.Tagged)
	}
	if !cfg.trackFates {
		return in.outputs(s, raw, rawLate), nil
	}
	raw, fates, err := intervalFates[K, L, R](s, raw)
	if err != nil {
		return Outputs{}, err
	}
	out := in.outputs(s, raw, rawLate)
	out.Fates = fates
	return out, nil
}

// newJoiner is the joiner of a join with config cfg and key coder key: the
// interval join's DoFns carry it, and the runner-model harness
// (model_harness_test.go) builds its DoFns through it too.
func newJoiner(cfg config, key coders.Element) (j joiner, bucketed bool) {
	j = joiner{
		Rules:        cfg.rules(),
		MaxBuffered:  cfg.maxBuffered,
		CleanupEvery: cfg.cleanupMillis(),
		Key:          key,
		NoCache:      cfg.noCache,
		ID:           newJoinID(),
		KeyMemory:    cfg.keyMemory,
		CacheBytes:   cfg.cacheBytes,
		BucketAbove:  cfg.bucketAbove,
		LogLimit:     bucketLogLimit,
		Fates:        cfg.trackFates,
	}
	bucketed = cfg.set&setHotKeyBuckets != 0
	if l := cfg.layout; l != nil {
		bucketed, j.BucketAbove, j.LogLimit = l.bucketed, l.bucketAbove, l.logLimit
	}
	j.AppendCleanup = !bucketed && !cfg.noAppendCleanup && appendable(j.Rules)
	return j, bucketed
}

// statefulFn is the stateful DoFn of j's layout: bucketedIntervalFn if
// bucketed, else intervalFn.
func statefulFn(j joiner, bucketed bool) any {
	if bucketed {
		return &bucketedIntervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"),
			Buckets: state.MakeMapState[int64, []byte]("buckets"), Cleanup: timers.InEventTime("cleanup")}
	}
	return &intervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup")}
}
