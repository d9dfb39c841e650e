// Package multiway is the engine of the multi-way interval join
// (join.Multi): its matching rules, its per-key state layout, its one
// cleanup timer, its stateful DoFn and its bounded path.
//
// Input 0 is the anchor; input i > 0 matches an anchor element a on its
// key when Lower_i <= ts - ts(a) <= Upper_i (Rules.Matches). For each
// anchor element the join's rows are the cross product, over the other
// inputs, of the elements that match it, with nil for an optional input
// that has none; a required input with none gives no rows (Rules.Rows).
// Every element is kept until no element that is not late can still make
// a row with it (Rules.Expiry), which for an input element is one anchor
// reach longer than in a two-way join: a row needs its anchor's other
// partners too. Lateness is judged per key from the cleanup already done
// there (Rules.IsLate), as the interval join judges it.
//
// It rests on the Beam Go SDK (bag state, one event-time timer family with
// tags: package timertag), the shared matching vocabulary of
// transforms/internal/match (Emit, Fate, NoProgress), coders for the
// bundle cache's keys, package bounded for its bounded path and package
// raw for it and the metrics namespace. It
// imports no other engine and not package join, which turns options into
// a Config and decodes the Rows it emits into typed records.
// docs/design/multiway.md explains the design and its costs.
package multiway
