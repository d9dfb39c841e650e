// Package interval is the engine of the interval join, join.Interval: a
// left element l and a right element r of a key match iff lower <=
// ts(r) - ts(l) <= upper. It holds the join's three ways of running,
// which Build chooses by its Config:
//
//   - the default (bag) layout (fn.go, state.go): one stateful DoFn per
//     key that keeps both sides in one bag state, with a per-bundle cache
//     of the keys it has read (cache.go); with hot-key detection
//     (Config.HotAfter, hot.go), a key that buffers that many elements
//     goes hot, and its later elements take the split layout's buckets
//     while the earlier ones stay in its bag;
//   - the split layout, SplitKeys (split.go, split_fn.go): a first stage
//     per key that judges lateness and sends each element to the time
//     buckets it belongs to or is needed in, and a second stage per
//     bucket that matches and cleans up;
//   - the bounded path, Bounded (bounded.go): each key's elements
//     gathered in time buckets until the input is done, then sorted and
//     swept through the same rules.
//
// The timer policy is in timer.go: one tagged cleanup timer per key (or
// bucket), which also holds the output watermark for EmitFinal's and
// EmitRetract's records and forgets a key whose data is gone; fates.go
// emits each element's fate (TrackFates); counters.go holds its metrics.
//
// It takes the join's two sides as encoded, side-tagged values in the
// global window (raw.Encoded, keyed by the join's key) and returns raw
// records (raw.Record), late elements and fates (raw.FateRecord), which
// package join decodes into Result, LateElement and Fate values and puts
// back into the inputs' windowing; package join also turns the options
// into its Config.
//
// It rests on the matching core (transforms/internal/match), which
// decides every match, expiry, lateness and outer record: the DoFns only
// move data between Beam's state and timers and the core. Its state is in
// the format of package bagstate; its timers are package timertag's
// tagged family; its split and bounded runner keys are package
// runnerkey's; its bounded path gathers and collects with package
// bounded. It imports no other engine and not package join.
// docs/design/interval.md explains the design, its costs and its limits.
package interval
