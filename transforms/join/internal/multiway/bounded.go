package multiway

// This file holds the multi-way join's bounded path: each element is
// stamped with its event time, the inputs are grouped by key (one
// GroupByKey), and each key's rows are computed at once, as the streaming
// path's EmitFinal emits them; nothing is late.

import (
	"bytes"
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

func init() {
	register.DoFn4x0[beam.EventTime, beam.X, Tagged, func(beam.X, Timed)](&StampFn{})
	register.Emitter2[beam.X, Timed]()
	register.DoFn6x0[context.Context, beam.X, func(*Timed) bool, func(beam.EventTime, beam.X, Row), func(beam.EventTime, beam.X, Tagged),
		func(beam.EventTime, beam.X, FateRecord)](&BoundedFn{})
	register.Iter1[Timed]()
}

// Timed is a Tagged element with its event time, which a GroupByKey
// does not keep.
type Timed struct {
	Input uint8
	Time  int64
	Value []byte
}

// StampFn stamps each tagged element with its event time.
type StampFn struct{}

// ProcessElement stamps in with et.
func (StampFn) ProcessElement(et beam.EventTime, k beam.X, in Tagged, emit func(beam.X, Timed)) {
	emit(k, Timed{Input: in.Input, Time: et.Milliseconds(), Value: in.Value})
}

// BoundedFn computes a key's rows from all its elements.
type BoundedFn struct {
	Config Config
	c      *counters
}

// Setup builds the counters.
func (f *BoundedFn) Setup() { f.c = newCounters(len(f.Config.Rules.Inputs)) }

// ProcessElement emits the rows of each anchor element of key, at their
// row times, and every element's fate. Nothing is late on this path: the
// late output, which it declares so that the join's outputs are the
// streaming path's, stays empty.
func (f *BoundedFn) ProcessElement(ctx context.Context, key beam.X, values func(*Timed) bool,
	emit func(beam.EventTime, beam.X, Row), _ func(beam.EventTime, beam.X, Tagged), emitFate func(beam.EventTime, beam.X, FateRecord)) {
	r := f.Config.Rules
	b := NewBuffer(len(r.Inputs))
	var v Timed
	for values(&v) {
		f.c.in[v.Input].Inc(ctx, 1)
		b.Add(&Elem{Input: int(v.Input), Time: v.Time, Value: bytes.Clone(v.Value)})
	}
	final := r
	final.Emit = match.Final
	fn := &Fn{Config: f.Config, c: f.c}
	fn.Config.Rules = final
	fn.expire(ctx, b, key, int64(1<<62), emit, emitFate)
}
