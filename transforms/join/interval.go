package join

// This file holds Interval, the interval join composite, and LateBehind,
// its lateness rule in terms of the watermark. Its engine is package
// internal/interval; docs/design/interval.md explains how it runs.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/join/internal/interval"
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
// The join type (Inner, the default, LeftOuter, RightOuter, FullOuter) says
// which elements without a partner are reported, the emission mode
// (EmitImmediate, the default, EmitFinal, EmitRetract) when. LowerExclusive
// and UpperExclusive exclude an end of the bounds; AllowedLateness keeps
// elements longer; CleanupEvery, SplitKeys and MaxBufferedPerKey tune
// cost and memory; UniqueLeft, for a left keyed by its own id, buffers
// fewer right elements; TrackFates adds Outputs.Fates, one Fate per
// input element.
//
// When both inputs are bounded (files read whole, beam.Create) the join
// takes its bounded-input path by itself (see Bounded): the same records
// as the streaming path gives on a stream, at a few state calls per key
// rather than per element. Streaming keeps the streaming path; Bounded
// takes the bounded one for an unbounded input that ends.
//
// A left element can be matched until event time passes
// ts + max(upper, 0) + allowed lateness, a right one until
// ts + max(-lower, 0) + allowed lateness; then it is removed and, under
// EmitFinal, reported unmatched if it is on an outer side and never
// matched. An element is late iff one of its potential partners may
// already have been removed on its key; late elements go to Outputs.Late,
// neither joined nor buffered. One no more than the allowed lateness
// behind the watermark is never late, so no pair is lost at the cleanup
// boundary. EmitFinal and EmitRetract records carry the element's own
// timestamp and are never late downstream: the join holds the output
// watermark for them. Both inputs must be windowed alike; the join runs in
// the global window, so pairs straddling window boundaries are found, and
// gives its outputs back the inputs' windowing. docs/design/interval.md
// gives the state, timers, costs and the limits of lateness.
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
	cfg, err := intervalConfig(withInputs(opts, left, right))
	if err != nil {
		return Outputs{}, err
	}
	in, err := tagEventTime[K, L, R](s, op, left, right)
	if err != nil {
		return Outputs{}, err
	}
	fateType := reflect.TypeFor[Fate[K]]()
	if cfg.trackFates {
		if err := checkRegistered[K, L, R](op, fateType); err != nil {
			return Outputs{}, err
		}
	}
	records, late, fates, err := interval.Build(s, op, cfg.interval(), in.Key, in.Sides)
	if err != nil {
		return Outputs{}, err
	}
	var fateRecords beam.PCollection
	if cfg.trackFates {
		if fateRecords, err = decodeFates(s, op, fates, fateType); err != nil {
			return Outputs{}, err
		}
	}
	out := in.outputs(s, records, late, cfg.lateness)
	out.Fates = fateRecords
	return out, nil
}

// LateBehind returns how far behind the watermark an element of side s
// may be and still be joined by an Interval built with opts: an element
// more than that behind the watermark may have lost a partner to cleanup,
// and the join, once its key's cleanup has reached the watermark, judges
// it late. It is the allowed lateness plus, when the bounds keep every
// partner of side s later than it (a lower bound above 0 for the left
// side, an upper bound below 0 for the right), that distance; so an
// element behind the watermark by no more than the allowed lateness is
// never judged late by it.
//
// The join itself cannot read the watermark and judges an element against
// its key's cleanup (see docs/design/interval.md, "Lateness: what the join
// can and cannot know"), so an element far behind the watermark on a key it never saw
// is joined as new. A source that knows its watermark (a replay, a stream
// reader with a watermark estimate) can send an element more than
// LateBehind behind it to a late output of its own instead; the package
// documentation says what that gives and what it costs. Package jsonl's
// replay does so for the beamjoin command.
//
// LateBehind returns TryInterval's error for options it would reject, and
// an error for a side that is neither Left nor Right.
func LateBehind(s Side, opts ...Option) (time.Duration, error) {
	if s != Left && s != Right {
		return 0, fmt.Errorf("beamjoin: join.LateBehind: unknown side %d", s)
	}
	c, err := intervalConfig(opts)
	if err != nil {
		return 0, err
	}
	r := c.rules()
	// Rules.IsLate: an element of side s at ts is late against progress p
	// iff Expiry(other side, from) <= p, from being its earliest partner's
	// time. Both are ts plus a constant, so with p the watermark it is late
	// iff it is at least that constant behind it: more than the constant
	// less a millisecond.
	from, _ := r.PartnerRange(s.core(), 0)
	return time.Duration(r.Expiry(s.core().Other(), from)-1) * time.Millisecond, nil
}
