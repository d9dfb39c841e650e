// Package join gives Beam pipeline authors the two-stream operations Flink
// users have — connect, coGroup, window join and interval join — on Apache
// Beam's Go SDK, with all four join types on the joins and three ways to
// emit outer results on the interval join.
//
//	route       function   result
//	connect     Connect    PCollection<KV<K, Tagged[L,R]>> for your own stateful DoFn
//	coGroup     CoGroup    PCollection<Group[K,L,R]>: per key and window, all values of each side
//	window join Window     PCollection<WindowResult[K,L,R]>: per key and window, the pairs
//	interval    Interval   PCollection<Result[K,L,R]>: pairs within a time range of each other
//
// Inputs are keyed PCollections, left PCollection<KV<K,L>> and right
// PCollection<KV<K,R>>, and event time is the element timestamp. Type
// arguments are given at the call site, since Go cannot infer them from a
// beam.PCollection, and are checked against the inputs:
//
//	out := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
//	// out.Records: PCollection<Result[string, Order, Payment]>; out.Late: the late elements
//
// Each transform returns Outputs: its records, and the late elements and
// fates that options ask for. The program registers the generic types the
// joins emit, once per K, L, R, in an init function:
//
//	func init() { join.RegisterTypes[string, Order, Payment]() }
//
// Keys must encode deterministically, or two equal keys could reach
// different state or groups and never meet: a floating-point key, or a
// struct holding a float or a map in an exported field, is a construction
// error that says where and suggests a string or an integer key instead.
//
// Options are values, validated once, when the transform is added: join
// types (Inner, the default, LeftOuter, RightOuter, FullOuter), emission
// modes (EmitImmediate, the default, EmitFinal, EmitRetract), and the
// results of Between, LowerExclusive, UpperExclusive, AllowedLateness and
// WindowInto. The tuning options CleanupEvery, HotKeyBuckets and
// MaxBufferedPerKey trade the interval join's cost against its memory. A
// transform given an option it does not take says so. Each transform
// panics on misuse with a clear message; its Try variant returns the error,
// and Route.Check checks options before anything is built. Side, Type and Emit read and write their names as
// text ("left", "full", "final"), for flags and JSON.
//
// # Choosing a route
//
// Interval is the one to reach for when "belongs together" means "close in
// time": a payment 0–15 minutes after its order, a click within 10 minutes
// of an impression. It is a stateful DoFn with bag state and event-time
// timers, pairs depend only on which elements are present (never on their
// arrival order), no pair is lost at the cleanup boundary, and outer results
// can be emitted immediately, once final, or as a retracting changelog. See
// Interval for its rules, and the sections below for its state, timers and
// counters.
//
// Window and CoGroup work per window of Beam's windowing: simple and cheap,
// but a pair that straddles a window boundary is missed, and sliding windows
// repeat pairs in every window two elements share.
//
// # Late data in Window and CoGroup
//
// Neither drops anything silently, where Beam's GroupByKey (and Flink's
// window join) would. A window fires once, when the watermark passes its
// end. An element that arrives after its window expired (its end plus the
// allowed lateness) is late for it: it is in no record of that window,
// and, with ReportLate, Outputs.Late holds it as a WindowLateElement, one
// per window it missed, with that window. With
// AllowedLateness(d), an element that arrives within d of its window's end,
// after the window fired, is late but allowed: it adds a late pane to the
// window, timestamped like the first, whose records are
//
//   - for Window, the pairs of the new element with every value of the
//     other side the window holds (on time or late), or, if there is none
//     and its side is outer, a KindUnmatched record for it; records
//     already written stay, so a value first reported unmatched is then in
//     a pair too;
//   - for CoGroup, a further Group of the window holding the values new
//     since its previous Group, or every value so far if the inputs are
//     windowed with beam.PanesAccumulate.
//
// With TrackFates, Outputs.Fates holds one Fate per input element
// (matched, unmatched, expired, grouped or late), so that per side
// in = matched + unmatched + expired + late (Window) or in = grouped + late
// (CoGroup) can be counted from records with ordinary combines.
//
// Connect is for everything else: it tags, flattens and keys the two inputs
// so that your own stateful DoFn sees both, like Flink's connect and
// CoProcessFunction.
//
// # Runners
//
// Everything here runs on Prism, the Go SDK's portable local runner, and
// unchanged on Flink (through its job server) and Dataflow. The interval join
// uses one timer family, as Prism requires, and only state kinds every
// portable runner supports (bag state, event-time timers with output
// timestamps), unless HotKeyBuckets is given: that option adds map state,
// which Prism supports.
//
// On Prism, run pipelines that use Interval with
// --experiments=prism_disable_sdf_split (the flag, or jobopts.Experiments
// set before beam.Init); this package sets no Beam option itself, and other
// runners ignore the experiment. Without it, Prism v2.77 splits a slow
// bundle of the join's stateful DoFn and hands the split-off elements to a
// new bundle, and its splitBundle marks their keys free although the first
// bundle may still be working on the same keys: two bundles then work on
// one key at once, each reading and writing its state, and a split of a
// bundle that holds timers also drops their watermark holds
// (apache/beam#35771). Both lose or repeat the join's work: pairs made
// twice, elements never accounted for.
//
// # The interval join's state
//
// Interval tags each side's values with their side, encoding them with the
// input's own Beam coder, flattens the two, and runs one stateful DoFn on the
// key. The DoFn keeps both sides of a key in one state.Bag (a bag element is
// a chunk of entries, see the internal package bagstate) and cleans it with
// one event-time timer. The matching rules themselves live in an internal
// package, plain Go shared with the in-memory streamjoiner.StreamJoiner, so
// the two cannot disagree.
//
// Every state call is a round trip to the runner (about 50 µs on Prism), so
// the design counts them:
//
//   - An arriving element costs one bag read and one append. The read is
//     skipped when the key was already read in the same bundle: the DoFn
//     keeps the keys it has read, decoded, until the bundle ends, because a
//     key's state can only change through the one DoFn instance that
//     processes it during a bundle. A runner that bundles many elements of
//     a key together (Prism does) thus reads a hot key once per bundle,
//     not once per element. Eviction (MaxBufferedPerKey) adds a clear: the
//     bag is rewritten as one chunk. A timer is set only when the key's
//     cleanup time or watermark hold moves.
//   - The bundle cache is bounded: BundleCacheBytes (default
//     DefaultBundleCacheBytes, 64 MiB per DoFn instance) caps its
//     estimated size (each cached key's buffered values and bucket
//     values, plus 256 bytes per key, 48 per entry and 96 per bucket read).
//     Past the bound the least recently used keys are dropped, and read
//     again (one more state call) if they come back in the same bundle;
//     a key larger than the bound alone is not kept past its element.
//     Records do not depend on it. A bundle over millions of keys, such
//     as a batch runner's, thus holds at most the bound plus a constant,
//     not its whole input. The counters cache_hits and cache_misses say
//     how well it serves. The bounded-input path (Bounded) has no such
//     cache: it holds one key's elements at a time.
//   - The cleanup timer fires CleanupEvery less a millisecond after the
//     key's earliest expiry. A firing reads the bag, removes everything
//     that has expired by then and writes the rest back as one chunk:
//     three calls, shared by every element that expires within
//     CleanupEvery of the earliest, so a key whose elements come in
//     bursts pays one firing per burst. When everything the key buffers
//     expires by the firing, and the join's timers hold nothing and it
//     emits nothing when elements expire (inner joins, and outer joins
//     under EmitImmediate, in the bag layout), the firing costs one call
//     and no read: it appends a cleanup record to the bag (its timer is
//     tagged "~", and the key's forgetting timer is set beside it). The
//     next reader of the bag applies the record, removing the elements it
//     covers, which stay in state until an arrival finds 16 of them and
//     rewrites the bag instead of appending (one more call), or the key
//     is forgotten; their fates and the buffered counter are counted
//     then. On input like the benchmarks' (a key's elements in pairs,
//     sparser than the span), a pair of elements then costs about five
//     calls instead of seven. CleanupEvery's default is a
//     quarter of the join span, max(upper,0) + max(-lower,0) + twice the
//     allowed lateness (2.5 s for bounds of ±5 s): an element then stays
//     at most that long past its expiry, and a key with steady traffic
//     buffers at most about 1.5 times what the span requires. A coarser
//     CleanupEvery trades state size and the delay of EmitFinal's records
//     for fewer firings; one millisecond makes cleanup exact.
//   - The timer's time depends on the earliest expiry alone, so an
//     arrival can move it earlier but never later. A firing cleans up at
//     the time the key's state implies, removes what expires by then and
//     records that time as the key's progress, from which lateness is
//     judged (see Interval); so the firing must be for that time, which
//     the runner's watermark has reached. The timer's tag says which time
//     it is for (a timer that holds nothing has the empty tag and its
//     firing time as its output timestamp; any other is tagged with its
//     hold and firing time), and a stale firing, one for an earlier time
//     than the state implies (a firing delivered twice, or one whose key
//     has been cleaned up since) or for a key whose state is gone, cleans
//     nothing: the timer is set again and the firing counted in
//     stale_firings. A cleanup record is checked the same way by its
//     reader, against the timer the state implied where the record
//     stands in the bag: a stale record removes nothing, the key's timers
//     are set again, and it is counted when the bag is rewritten, which
//     the next arrival does.
//
// The timer holds the output watermark at the oldest buffered outer
// element, so EmitFinal and EmitRetract records, which carry that element's
// own timestamp, are never late downstream. After a key's last element is
// removed the key keeps its cleanup progress in state for one join memory
// (max(upper,0) + max(-lower,0) + allowed lateness + 1 ms); then its state
// is cleared, and the worker process remembers the progress (KeyMemory).
//
// # Late data in Interval
//
// A DoFn cannot read the watermark. Interval judges an arriving element
// late iff one of its potential partners may already have been removed on
// its key, against what the join knows of its key: the time of the key's
// latest cleanup firing, kept in state while the key holds data and for
// one join memory after, and then in the worker process's memory of
// forgotten keys (up to KeyMemory keys per join, oldest first out). So an
// element that arrives long after its key's data is gone, behind a cleanup
// that happened, is late, and its records do not appear. Late elements are
// neither joined nor buffered: they go to the late output, with fate late.
// An element behind the watermark by no more than the allowed lateness is
// never late.
//
// Where the join cannot know: an element behind the watermark on a key
// that this process has never cleaned up (a new key, a key forgotten
// beyond KeyMemory, or one that moved to another worker or outlived a
// worker restart) is joined as new. Its records carry its own timestamp,
// which is behind the watermark, as any DoFn's output of late input is: a
// downstream GroupByKey may drop them as late. Records of an element that
// was on time when it arrived are never late downstream.
//
// A source that knows its own watermark can close that gap; the join
// cannot. LateBehind(side, opts...) is how far behind the watermark an
// element of a side may be before the join, had its cleanup on the
// element's key reached the watermark, would judge it late: the allowed
// lateness, plus the distance to the element's earliest possible partner
// when the bounds keep all its partners later than it. A source that sends
// each element more than that behind its watermark (at least the one it
// has reported when it emits the element) to a late output of its own
// leaves the join no element behind a cleanup the join may not know of:
// none is joined as new behind the watermark, so no record is behind it,
// and whether an element is late no longer depends on what the join
// remembers of its key. It has a cost: such an element is late even when
// its partners are all still buffered. The beamjoin command does this for
// replayed files (package pipelines/jsonl, Source.JudgeLate); a pipeline of
// one's own must do it in its own source, or in a DoFn fused with it, which
// alone know the watermark when they emit. Beam's sources do not.
//
// Why not a bound from every key's timer firings, which proves the
// watermark passed them: Prism v2.77 orders a key's elements and timer
// firings by event time, but fires a key's timers against its upstream
// watermark while other keys' elements wait at the stage, in streaming and
// in batch. An on-time element of one key is then processed after another
// key's firing later than its timestamp, and such a bound judges it late
// (measured: a batch run of the package Example lost on-time payments).
// A key's own firings are sound on every runner.
//
// # The bucketed layout
//
// HotKeyBuckets(n) adds a second layout for keys that buffer more than n
// elements, so that an arrival no longer reads the key's whole buffer. Such
// a key keeps its elements in a state.Map of time buckets, each as wide as
// the partner range (upper - lower + 1 ms) but at least CleanupEvery, so an
// element's partners are in at most two buckets. Its bag keeps the
// progress, a directory of the buckets (count and oldest time per side) and
// up to 64 recent arrivals. Then:
//
//   - An arrival reads the bag (unless cached), gets each bucket its
//     partners can be in that is not cached yet (at most two; under
//     EmitRetract up to five, since a retraction looks at the partners'
//     partners), and appends to the bag. Every 64 arrivals are moved into
//     their buckets: a get per bucket not yet read, a put (two calls) per
//     bucket written, and a bag rewrite (two calls).
//   - A cleanup firing reads the bag and the buckets that can hold an
//     expiring element or its partners, writes back each bucket that
//     changed (two calls; one to remove an emptied bucket) and rewrites the
//     bag. Eviction does the same for the oldest buckets.
//   - A key whose buffer falls to n/2 elements or fewer moves back into
//     the bag at its next rewrite.
//
// Without the option a join declares bag state only. Map state is
// supported by Prism, but not by every runner's portable state API, so the
// bucketed layout is opt-in; with the bundle cache the bag layout already
// keeps a hot key's cost nearly flat on Prism, whose bundles hold many
// elements of a key, while the buckets keep it flat also where bundles are
// small. `make bench` measures both on Prism against a DoFn that only
// appends to a bag (see the README's Performance section for the figures).
//
// # Counters
//
// Beam counters in namespace "beamjoin" (Namespace): left_in and right_in;
// pairs_out, retractions_out, left_unmatched_out and right_unmatched_out
// (records); and each element's fate, exactly one per element once its key
// is cleaned up (for elements a cleanup record removed, once the bag is
// rewritten without them or cleared; so are their decrements of buffered
// and the stale records): left_matched, left_unmatched (an outer element that never
// matched), left_expired (an inner-side element that never matched),
// left_evicted, left_late, and the same for right. The distribution
// buffered_per_key records a key's buffered count at each arrival, and the
// counter keys_with_state goes up when a key gets state and down when its
// state is cleared: it is zero once every key's state is gone. Those two
// are gauges kept as counters, and so approximate wherever the runner
// reports attempted rather than committed metrics (Dataflow streaming) or
// counts a failed and retried bundle's updates: they may then drift from
// zero, and the per-side sums of the fate counters from the elements in.
// For an exact account, use TrackFates: Outputs.Fates holds one Fate per
// input element, as records that a retried bundle emits once. The
// counters cache_hits and cache_misses count the arrivals and firings
// whose key the bundle cache held or had to read; they depend on how the
// runner bundles the input and are no part of the accounting.
// The counter stale_firings counts cleanup timer firings that were stale (see the
// interval join's state above) and so changed nothing.
package join
