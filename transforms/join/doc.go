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
//	results, late := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
//
// Options are values validated once, when the transform is added: join
// types (Inner, the default, LeftOuter, RightOuter, FullOuter), emission
// modes (EmitImmediate, the default, EmitFinal, EmitRetract), and the
// results of Between, AllowedLateness, MaxBufferedPerKey, CleanupEvery,
// HotKeyBuckets and WindowInto. A transform given an option it does not take says so. Each
// transform panics on misuse with a clear message; its Try variant returns
// the error.
//
// # Choosing a route
//
// Interval is the one to reach for when "belongs together" means "close in
// time": a payment 0–15 minutes after its order, a click within 10 minutes
// of an impression. It is a stateful DoFn with bag state and event-time
// timers, pairs depend only on which elements are present (never on their
// arrival order), no pair is lost at the cleanup boundary, and outer results
// can be emitted immediately, once final, or as a retracting changelog. See
// Interval for its state, timers, lateness rule and counters.
//
// Window and CoGroup work per window of Beam's windowing: simple and cheap,
// but a pair that straddles a window boundary is missed, and sliding windows
// repeat pairs in every window two elements share.
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
// # Performance
//
// Each state access of a stateful DoFn is a round trip to the runner, so
// the interval join is built around the number of them per element: an
// arrival reads its key's bag (at most once per key and bundle; the DoFn
// caches what it read until the bundle ends) and appends to it, and a
// cleanup firing reads, clears and rewrites the bag. A hot key that buffers
// thousands of elements can keep them in time buckets instead
// (HotKeyBuckets), so that an arrival reads only the buckets its partners
// can be in. Interval's documentation counts the calls of each step;
// `make bench` measures them on Prism against a DoFn that only appends to a
// bag.
//
// The matching rules themselves live in package match, plain Go shared with
// the in-memory streamjoiner.StreamJoiner.
package join
