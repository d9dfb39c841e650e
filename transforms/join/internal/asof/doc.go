// Package asof is the engine of the as-of (temporal) join, join.AsOf: its
// rules (rules.go: which version a left element joins, what a key keeps,
// how a timer firing finalizes left elements and drops versions, where
// the key's one timer goes), its state layout (state.go), its streaming
// stateful DoFn (fn.go) and its bounded path (bounded.go), each only
// moving data between Beam and the rules.
//
// It takes the join's two sides as encoded, side-tagged values in the
// global window (raw.Encoded, keyed by the join's key) and returns raw
// records (raw.Record, always of the left element's time) and late
// elements, which package join decodes into Result and LateElement values
// and puts back into the inputs' windowing. Build adds it to a pipeline;
// package join turns the options into its Config.
//
// It rests on the Beam Go SDK (bag state, one event-time timer family
// with tags: package timertag), the records and counters of package raw,
// and, for its bounded path, package bounded. It imports no other engine
// and not package join. docs/design/asof.md explains the design and its
// costs.
package asof
