package multiway

// This file holds the multi-way join's bounded path: each input's
// elements are encoded with their input's number in front (PackFn), each
// bundle's elements of each input are gathered by shard of the keys
// (bounded.GatherAll, one bucket), collected in state until the input is
// done (bounded.Groups, whose timer holds the output watermark until then,
// so that the rows are on time downstream), and then each key's rows are
// computed at once, as the streaming path's EmitFinal emits them; nothing
// is late.

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bounded"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

func init() {
	register.DoFn3x1[beam.X, beam.Y, func(beam.X, raw.Encoded), error](&PackFn{})
	register.Emitter2[beam.X, raw.Encoded]()
	register.DoFn9x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []bounded.Part,
		func(beam.EventTime, beam.X, Row), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, beam.X, raw.FateRecord), error](&SweepFn{})
}

// op names the join in errors.
const op = "join.Multi"

// PackFn encodes one input's values for the bounded path: the input's
// number, one byte, then the value encoded with its input's coder. The
// bounded path's state (bounded.Groups) has two sides; the number in the
// value says which of the join's inputs a value comes from.
type PackFn struct {
	Input uint8
	Value coders.Element
}

// Setup rebuilds the value coder.
func (f *PackFn) Setup() error { return f.Value.Setup() }

// ProcessElement packs v.
func (f *PackFn) ProcessElement(k beam.X, v beam.Y, emit func(beam.X, raw.Encoded)) error {
	b, err := f.Value.Encode(v)
	if err != nil {
		return err
	}
	emit(k, raw.Encoded{Value: append([]byte{f.Input}, b...)})
	return nil
}

// Bounded builds the bounded path over inputs, each input's
// PCollection<KV<K,V>> in the global window, with values encoded by
// values (one coder per input), gathering as g says (its Key is
// cfg.Key): the rows, late elements (none) and fate records, as the
// streaming path's DoFn gives them.
func Bounded(s beam.Scope, cfg Config, inputs []beam.PCollection, values []coders.Element, g bounded.Gathering) ([]beam.PCollection, error) {
	packed := make([]beam.PCollection, len(inputs))
	for i, in := range inputs {
		packed[i] = beam.ParDo(s.Scope(fmt.Sprintf("input%d", i+1)), &PackFn{Input: uint8(i), Value: values[i]}, in)
	}
	g.Key = cfg.Key
	gathered, err := bounded.GatherAll(s, op, packed, g)
	if err != nil {
		return nil, err
	}
	fn := &SweepFn{Config: cfg}
	fn.Groups, fn.Release = bounded.NewState()
	keyType := beam.TypeDefinition{Var: beam.XType, T: inputs[0].Type().Components()[0].Type()}
	return beam.ParDoN(s, fn, gathered, keyType), nil
}

// SweepFn joins the keys of one shard once the input is done: it
// collects each gathered element in state (bounded.Groups), and the firing
// that releases them computes each key's rows from all its elements, at
// their row times, and every element's fate. Nothing is late on this
// path: the late output, which it declares so that the join's outputs are
// the streaming path's, stays empty.
type SweepFn struct {
	Config Config
	// Groups and Release collect the shard's values (bounded.Groups).
	Groups  state.Bag[[]byte]
	Release timers.EventTime

	c *counters
}

// Setup builds the counters and readies the key coder.
func (f *SweepFn) Setup() error {
	f.c = newCounters(len(f.Config.Rules.Inputs))
	return f.Config.Key.Setup()
}

// ProcessElement collects a gathered element.
func (f *SweepFn) ProcessElement(_ context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ []byte, parts []bounded.Part,
	_ func(beam.EventTime, beam.X, Row), _ func(beam.EventTime, beam.X, raw.Encoded), _ func(beam.EventTime, beam.X, raw.FateRecord)) error {
	return bounded.GroupsOf(&f.Groups, &f.Release).Add(op, sp, tp, et, parts)
}

// OnTimer releases the shard's values and emits each key's rows.
func (f *SweepFn) OnTimer(ctx context.Context, sp state.Provider, tp timers.Provider, _ []byte, tc timers.Context,
	emit func(beam.EventTime, beam.X, Row), _ func(beam.EventTime, beam.X, raw.Encoded), emitFate func(beam.EventTime, beam.X, raw.FateRecord)) error {
	var swept error
	err := bounded.GroupsOf(&f.Groups, &f.Release).Each(op, sp, tc.Tag, &f.Config.Key, func(key beam.X, entries []match.Entry[[]byte]) {
		if swept == nil {
			swept = f.sweep(ctx, key, entries, emit, emitFate)
		}
	})
	if err != nil {
		return err
	}
	return swept
}

// sweep computes a key's rows from its entries, each a packed value.
func (f *SweepFn) sweep(ctx context.Context, key beam.X, entries []match.Entry[[]byte],
	emit func(beam.EventTime, beam.X, Row), emitFate func(beam.EventTime, beam.X, raw.FateRecord)) error {
	r := f.Config.Rules
	b := NewBuffer(len(r.Inputs))
	in := make([]int64, len(r.Inputs))
	for _, e := range entries {
		if len(e.Value) == 0 || int(e.Value[0]) >= len(r.Inputs) {
			return fmt.Errorf("beamjoin: %s: bounded path: a value of no input of the join in state", op)
		}
		i := int(e.Value[0])
		in[i]++
		b.Add(&Elem{Input: i, Time: e.Time, Value: e.Value[1:]})
	}
	for i, n := range in {
		if n > 0 {
			f.c.in[i].Inc(ctx, n)
		}
	}
	final := r
	final.Emit = match.Final
	fn := &Fn{Config: f.Config, c: f.c}
	fn.Config.Rules = final
	fn.expire(ctx, b, key, int64(1<<62), emit, emitFate)
	return nil
}
