// Package join gives Beam pipeline authors the two-stream operations Flink
// users have — connect, coGroup, window join and interval join — on Apache
// Beam's Go SDK, with all four join types and three ways to emit outer
// results on the interval join, and an as-of join.
//
//	route       function   result
//	connect     Connect    PCollection<KV<K, Tagged[L,R]>> for your own stateful DoFn
//	coGroup     CoGroup    PCollection<Group[K,L,R]>: per key and window, all values of each side
//	window join Window     PCollection<WindowResult[K,L,R]>: per key and window, the pairs
//	interval    Interval   PCollection<Result[K,L,R]>: pairs within a time range of each other
//	as-of       AsOf       PCollection<Result[K,L,R]>: each left element with the right version valid at its time
//
// Interval is the one to reach for when "belongs together" means "close in
// time" (a payment 0–15 minutes after its order): its pairs depend only on
// which elements are present, never on arrival order or window boundaries.
// Window and CoGroup work per window of Beam's windowing, and miss a pair
// that straddles a boundary. Connect tags and keys both inputs for a
// stateful DoFn of your own, like Flink's connect and CoProcessFunction.
//
// Inputs are keyed, left PCollection<KV<K,L>> and right PCollection<KV<K,R>>,
// and event time is the element timestamp. Type arguments are given at the
// call site and checked against the inputs; the program registers the types
// the joins emit once per K, L, R, in an init function:
//
//	func init() { join.RegisterTypes[string, Order, Payment]() }
//
//	out := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
//	// out.Records: PCollection<Result[string, Order, Payment]>; out.Late: the late elements
//
// Options are values (join types, emission modes, Between, lateness, and
// tuning), validated once when the transform is added; a transform given an
// option it does not take says so. Each transform panics on misuse with a
// clear message, its Try variant returns the error, and Route.Check checks
// options before anything is built. Keys must encode deterministically.
//
// Nothing late is dropped silently. Interval judges an element late iff a
// potential partner may already have been removed on its key (an element
// no more than the allowed lateness behind the watermark never is); Window
// and CoGroup, with ReportLate, report elements that missed their windows.
// Late elements go to Outputs.Late and are counted; TrackFates adds one
// Fate per input element to Outputs.Fates. LateBehind says how far behind
// its watermark a source may send an element before the join could judge
// it late.
//
// A hot key needs no flag: Interval's streaming path finds a key that
// buffers HotKeyThreshold elements and spreads its later elements over time
// buckets, each a runner key of its own, so that its cost per element stops
// growing with what it holds; ordinary keys pay nothing for it.
//
// Everything runs on Prism, Flink and Dataflow. On Prism, run pipelines
// that use Interval with --experiments=prism_disable_sdf_split: without it
// Prism v2.77 may split a bundle of the join's stateful DoFn and let two
// bundles work on one key (apache/beam#35771).
//
// More: docs/design/interval.md (state layout, cleanup, state calls,
// counters), docs/runners.md (per-runner guarantees; workers in another
// process), docs/performance.md (figures and how to reproduce them).
package join
