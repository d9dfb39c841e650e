package join

// This file holds AsOf, the as-of (temporal) join composite, and its
// options MaxAge and Strict. Its engine is package internal/asof.

import (
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/join/internal/asof"
)

// AsOf joins each element of left, a PCollection<KV<K,L>> of events, with
// the version valid at its event time among right, a PCollection<KV<K,R>>
// of versions of a value per key, each valid from its own event time: a
// left element at t joins the version of its key with the greatest time
// at or before t. Outputs.Records is a PCollection<Result[K,L,R]>, and
// Outputs.Late a PCollection<LateElement[K,L,R]> of the elements judged
// late.
//
//	out := join.AsOf[string, Order, Rate](s, orders, rates,
//		join.LeftOuter, join.MaxAge(24*time.Hour))
//
// MaxAge(d) accepts only versions at most d older than t (t - d <= time,
// inclusive); Strict only versions strictly before t. Two versions of a
// key at the same time are one too many: the one whose encoded value
// (the right input's coder) is greater in bytes.Compare order supersedes
// the other, whatever order they arrive in, and the other is never used.
//
// Inner (the default) reports nothing for a left element with no valid
// version; LeftOuter reports it as KindUnmatched. A pair's Time, and an
// unmatched record's, is the left element's time.
//
// EmitFinal (the default) makes each left element's record once event
// time has passed t, when no version at or before t can still come on
// time; the join holds the output watermark at its pending left elements,
// so the records are on time downstream. EmitRetract makes the record at
// once and, when a version arrives later that supersedes its match at t,
// a KindRetract record carrying the earlier record's values (a pair, or
// the left element alone) before the new pair: the changelog nets to
// EmitFinal's records.
//
// A DoFn cannot read the watermark, so lateness is judged per key from the
// timers that have fired on it: an element before the key's latest firing
// is late (a left element may have lost the versions it needed; a version
// may belong to a record already final), is neither joined nor kept, and
// goes to Outputs.Late. An element not behind the watermark is never
// late.
//
// Per key the join keeps its progress, the latest version before it,
// every later version, and the left elements not final yet; a timer
// drops a version once a later one is before the progress (and, under
// MaxAge, the last one once it is too old for any later left element).
// On a steady stream a key keeps about one version more than the
// versions ahead of the watermark. A key left with no version and no
// pending left element (its versions aged out under MaxAge, or it had
// left elements only) keeps its progress for ProgressHorizon (an hour by
// default), then its state is cleared, so that ever new keys leave no
// state behind; a very late element on it is then joined as new. Without
// MaxAge a key's latest version is valid for every later left element, so
// it is kept for as long as the key exists, as a versioned table keeps its
// current row. Each arrival costs two state calls (read, append), each
// timer firing three (read, clear, append), one that forgets a key two.
//
// When both inputs are bounded, AsOf takes its bounded-input path by
// itself (Streaming keeps the streaming path; Bounded takes the bounded
// one for an unbounded input that ends): each key's elements collected
// until the input is done and joined in memory, with a few state calls
// per shard of the keys rather than per element; its records are
// EmitFinal's (under EmitRetract too: no retraction is ever needed),
// nothing is late, and the records are on time downstream (a timer holds
// the output watermark for them until they are out). Inputs may be
// windowed as for Interval: the join runs in event time across windows
// and gives the records the inputs' windowing back.
//
// The program must call RegisterTypes[K, L, R]() in an init function.
// AsOf panics on misuse with a clear message; TryAsOf returns the error.
func AsOf[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) Outputs {
	out, err := TryAsOf[K, L, R](s, left, right, opts...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryAsOf is AsOf returning an error instead of panicking: for options
// AsOf does not take (see Route.Check), for inputs that are not
// PCollections of KV pairs with the type arguments' key and value types,
// and for types not registered with RegisterTypes.
func TryAsOf[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (Outputs, error) {
	const op = "join.AsOf"
	s = s.Scope(op)
	cfg, err := asofConfig(withInputs(opts, left, right))
	if err != nil {
		return Outputs{}, err
	}
	in, err := tagEventTime[K, L, R](s, op, left, right)
	if err != nil {
		return Outputs{}, err
	}
	records, late, err := asof.Build(s, op, cfg.asof(), in.Key, in.Sides)
	if err != nil {
		return Outputs{}, err
	}
	return in.outputs(s, records, late, 0), nil
}

// MaxAge makes AsOf join a left element at t only with a version at most
// d old: at or after t - d (inclusive). Without it any earlier version is
// valid, however old. It also lets the join drop a key's last version once
// it is too old for any later left element.
func MaxAge(d time.Duration) Option {
	return optionFunc(func(c *config) { c.maxAge = d; c.set |= setMaxAge })
}

// Strict makes AsOf join a left element at t only with a version strictly
// before t: a version at t itself is not yet valid.
func Strict() Option {
	return optionFunc(func(c *config) { c.strict = true; c.set |= setStrict })
}
