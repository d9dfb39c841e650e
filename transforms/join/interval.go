package join

// This file holds Interval, the interval join composite. Its DoFns are in
// interval_fn.go, its timer policy in interval_timer.go, its state layouts
// in interval_state.go; the package documentation explains how it runs.

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
)

// Interval joins left, a PCollection<KV<K,L>>, with right, a
// PCollection<KV<K,R>>: a left element l and a right element r with the
// same key match iff lower <= ts(r) - ts(l) <= upper, with the bounds given
// by Between. It returns the join's records, a PCollection<Result[K,L,R]>,
// and the elements judged late, a PCollection<LateElement[K,L,R]>.
//
//	results, late := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
//
// The left element is always the reference, whichever arrives first, so the
// pairs depend only on which elements are present, never on arrival order.
// Inner (the default), LeftOuter, RightOuter and FullOuter choose which
// elements without a partner are reported; EmitImmediate (the default),
// EmitFinal and EmitRetract choose when. LowerExclusive and UpperExclusive
// exclude an end of the bounds; AllowedLateness keeps elements longer, for
// data behind the watermark; CleanupEvery, HotKeyBuckets and
// MaxBufferedPerKey tune cost and memory.
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
// but go to the second output. An element not behind the watermark by more
// than the allowed lateness is never late, so no pair is lost at the
// cleanup boundary. A key whose state was cleared is remembered by its
// worker process (KeyMemory); what the join cannot know is in the package
// documentation's "Late data in Interval".
//
// The join is defined in event time, not per window. Inputs may be windowed
// in any way, fixed, sliding or sessions, as long as both are windowed
// alike (TryInterval names both windowings otherwise): the join moves them
// into the global window, so a pair straddling a window boundary is found,
// and gives its records and late elements back the inputs' window function,
// trigger and allowed lateness, each assigned to windows by its own
// timestamp. Under sliding windows a record is in every window that holds
// its timestamp, and each input element is joined once, however many
// windows it is in (the join keeps the copy in the earliest window that
// holds its timestamp). Under session windows each record starts a session
// of its own, [timestamp, timestamp+gap), which a GroupByKey downstream
// merges as usual. Late elements are behind the watermark, so a GroupByKey
// downstream drops them as late data unless the windowing allows that
// lateness: write them out ungrouped. Under Bounded the records are given
// the inputs' windowing too, but Prism drops them at a GroupByKey in any
// window but the global one (see Bounded); a batch runner keeps them.
//
// Result[K,L,R] and LateElement[K,L,R] are generic, so this package
// cannot register their instances with Beam, and a worker finds a type in
// a PCollection or a DoFn's field only by the name it was registered
// under. A worker that does not know an instance rebuilds it as an
// unnamed struct, and the join fails on its first record (a reflect.Set
// panic naming join.Kind or join.Side). This holds for Prism's workers in
// the launching process too, since they also decode the pipeline. So
// register both instances in an init function of the program: registering
// a function or DoFn that takes one (register.Function1x1 and the like)
// registers it, or call beam.RegisterType(reflect.TypeOf(join.Result[K, L, R]{}))
// and the same for LateElement. Workers in another process (Dataflow,
// Flink, Spark, or Prism with workers of its own) run the program's own
// binary, whose init functions register the same instances there; a
// registration at construction time, after beam.Init, would come too late
// (Beam panics).
//
// The package documentation describes how the join keeps its state, what
// each element costs in state calls, and its counters. Interval panics on
// misuse with a clear message; TryInterval returns the error.
func Interval[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (results, late beam.PCollection) {
	results, late, err := TryInterval[K, L, R](s, left, right, opts...)
	if err != nil {
		panic(err)
	}
	return results, late
}

// TryInterval is Interval returning an error instead of panicking: for
// options Interval does not take or that no pair can satisfy (see
// CheckInterval), and for inputs that are not PCollections of KV pairs with
// the type arguments' key and value types.
func TryInterval[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (results, late beam.PCollection, err error) {
	s = s.Scope("join.Interval")
	cfg, err := intervalConfig(opts)
	if err != nil {
		return results, late, err
	}
	if err := checkInputs[K, L, R]("join.Interval", left, right); err != nil {
		return results, late, err
	}
	windows, err := sharedWindows("join.Interval", left, right)
	if err != nil {
		return results, late, err
	}
	left, right = windows.intoGlobal(s.Scope("left"), left), windows.intoGlobal(s.Scope("right"), right)
	leftCoder, err := coders.KVValue(left)
	if err != nil {
		return results, late, err
	}
	rightCoder, err := coders.KVValue(right)
	if err != nil {
		return results, late, err
	}

	// Both inputs are in the global window now, which beam.Flatten needs;
	// TryFlatten returns, rather than panics on, anything else it refuses.
	tagged, err := beam.TryFlatten(s,
		beam.ParDo(s.Scope("left"), &encodeFn{Side: Left, Value: leftCoder}, left),
		beam.ParDo(s.Scope("right"), &encodeFn{Side: Right, Value: rightCoder}, right))
	if err != nil {
		return results, late, fmt.Errorf("beamjoin: join.Interval: %w", err)
	}
	keyCoder, err := coders.KVKey(left)
	if err != nil {
		return results, late, err
	}
	j := joiner{
		Rules:        cfg.rules(),
		MaxBuffered:  cfg.maxBuffered,
		CleanupEvery: cfg.cleanupMillis(),
		Key:          keyCoder,
		NoCache:      cfg.noCache,
		ID:           newJoinID(),
		KeyMemory:    cfg.keyMemory,
		CacheBytes:   cfg.cacheBytes,
		BucketAbove:  cfg.bucketAbove,
		LogLimit:     bucketLogLimit,
	}
	bucketed := cfg.set&setHotKeyBuckets != 0
	if l := cfg.layout; l != nil {
		bucketed, j.BucketAbove, j.LogLimit = l.bucketed, l.bucketAbove, l.logLimit
	}
	j.AppendCleanup = !bucketed && !cfg.noAppendCleanup && appendable(j.Rules)
	var fn any = &intervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup")}
	if bucketed {
		fn = &bucketedIntervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"),
			Buckets: state.MakeMapState[int64, []byte]("buckets"), Cleanup: timers.InEventTime("cleanup")}
	}
	var raw, rawLate beam.PCollection
	if cfg.bounded {
		raw, rawLate = joinBounded(s.Scope("bounded"), cfg, tagged)
	} else {
		raw, rawLate = beam.ParDo2(s, fn, tagged)
	}

	resultType := reflect.TypeOf(Result[K, L, R]{})
	results = beam.ParDo(s.Scope("results"), &resultFn{Out: beam.EncodedType{T: resultType}, Left: leftCoder, Right: rightCoder}, raw,
		beam.TypeDefinition{Var: beam.YType, T: resultType})
	lateType := reflect.TypeOf(LateElement[K, L, R]{})
	late = beam.ParDo(s.Scope("late"), &lateFn{Out: beam.EncodedType{T: lateType}, Left: leftCoder, Right: rightCoder}, rawLate,
		beam.TypeDefinition{Var: beam.YType, T: lateType})
	return windows.restore(s.Scope("results"), results), windows.restore(s.Scope("late"), late), nil
}
