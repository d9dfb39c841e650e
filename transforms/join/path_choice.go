package join

// This file holds how Interval, AsOf and Multi choose between their
// streaming path (a stateful DoFn that joins each element as it arrives)
// and their bounded path (Bounded, interval_bounded.go, asof_bounded.go
// and the multiway engine's): bounded inputs take the bounded path unless
// Streaming says otherwise.

import (
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Streaming makes Interval, AsOf or Multi run their streaming path even
// when all their inputs are bounded, where they otherwise take the bounded path by
// themselves (see Bounded).
//
//	out := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.MaxBufferedPerKey(1000), join.Streaming())
//
// The records are the same either way, but for two cases. Under
// MaxBufferedPerKey the streaming path's evictions follow the order in
// which the runner delivers a key's elements and fires its timers: on a
// batch runner (Flink's batch mode processes all of a key's elements, then
// its timers) it evicts more than on a stream, where the bounded path's
// records are the stream's. And a left input that breaks UniqueLeft loses
// right elements on the streaming path but not on the bounded one. The
// late output is empty on both, and the counters differ (see Bounded).
//
// Reasons to take it: a key so large under MaxBufferedPerKey that a worker
// cannot hold it in memory (the bounded path sweeps such a key whole; the
// streaming path keeps it in state), or a test of the streaming path
// itself on a bounded input such as beam.Create. On a batch runner the
// streaming path costs a state round trip per element and rereads a key's
// buffer at each cleanup firing: measured on Flink's batch mode it was
// 7.6 times slower than the bounded path at 20,000 elements and 29 times at
// 80,000. Streaming and Bounded cannot be given together.
func Streaming() Option {
	return optionFunc(func(c *config) { c.streaming = true; c.set |= setStreaming })
}

// inputsBounded is the option TryInterval, TryAsOf and TryMulti add when
// all of their inputs are bounded: the bounded path, unless Streaming is given.
func inputsBounded() Option {
	return optionFunc(func(c *config) { c.inputsBounded = true })
}

// withInputs is opts with inputsBounded added when every one of inputs
// is a bounded PCollection.
func withInputs(opts []Option, inputs ...beam.PCollection) []Option {
	for _, in := range inputs {
		if !isBounded(in) {
			return opts
		}
	}
	return append(opts[:len(opts):len(opts)], inputsBounded())
}

// isBounded reports whether p is a bounded PCollection. beam.PCollection
// does not export its graph node's Bounded method in the Go SDK v2.77, but
// its String is the node's, "{id: type/coder windowing}" with
// ":unbounded" before the closing brace when the node is unbounded
// (graph.Node.String). A windowing strategy whose own text ended so would
// be taken for unbounded: the streaming path, which joins any input.
func isBounded(p beam.PCollection) bool {
	return p.IsValid() && !strings.HasSuffix(p.String(), ":unbounded}")
}
