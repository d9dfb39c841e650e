package windowed

// This file holds the grouped path of Window and CoGroup, their default:
// both inputs windowed as the caller or the options say and grouped by
// Beam's CoGroupByKey, each value of Window stamped with its event time,
// which CoGroupByKey does not keep.

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowing"
)

func init() {
	register.DoFn4x1[beam.EventTime, beam.X, beam.Y, func(beam.X, []byte), error](&stampFn{})
	register.Emitter2[beam.X, []byte]()
	register.Iter1[[]byte]()
}

// Group is the grouped path of the route op: left and right, each
// windowed as cfg says (windowInput) and, with stamp, stamped with their
// event times (stampFn), grouped by Beam's CoGroupByKey in scope s. It
// returns the CoGroupByKey's output, which package join turns into
// records, and the inputs' value coders.
func Group(s beam.Scope, op string, cfg Config, left, right beam.PCollection, stamp bool) (grouped beam.PCollection, values [2]coders.Element, err error) {
	fail := func(err error) (beam.PCollection, [2]coders.Element, error) {
		return beam.PCollection{}, values, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	if cfg.Window == nil {
		if err := windowing.CheckAlike(op, left, right); err != nil {
			return beam.PCollection{}, values, err
		}
	}
	cols := [2]beam.PCollection{match.Left: left, match.Right: right}
	for side, col := range cols {
		ss := s.Scope(raw.SideName[side])
		var err error
		if values[side], err = coders.KVValue(col); err != nil {
			return fail(err)
		}
		if cols[side], err = windowInput(ss, cfg, col); err != nil {
			return fail(err)
		}
		if stamp {
			out, err := beam.TryParDo(ss, &stampFn{Value: values[side]}, cols[side])
			if err != nil {
				return fail(err)
			}
			cols[side] = out[0]
		}
	}
	if grouped, err = beam.TryCoGroupByKey(s, cols[match.Left], cols[match.Right]); err != nil {
		return fail(err)
	}
	return grouped, values, nil
}

// windowInput applies the options' windowing to col, one input of the
// grouped path: WindowInto's window function (with the default trigger,
// as beam.WindowInto gives it), and AllowedLateness over the window
// function, trigger and accumulation col already has. Without either,
// col keeps the windowing the caller gave it.
func windowInput(s beam.Scope, cfg Config, col beam.PCollection) (beam.PCollection, error) {
	var opts []beam.WindowIntoOption
	if cfg.LatenessSet {
		opts = append(opts, beam.AllowedLateness(cfg.Lateness))
	}
	if cfg.Window != nil {
		return beam.TryWindowInto(s, cfg.Window, col, opts...)
	}
	if len(opts) == 0 {
		return col, nil
	}
	ws := col.WindowingStrategy()
	if ws.Trigger != nil {
		opts = append(opts, beam.Trigger(ws.Trigger))
	}
	if windowing.Accumulation(ws) == window.Accumulating {
		opts = append(opts, beam.PanesAccumulate())
	}
	return beam.TryWindowInto(s, ws.Fn, col, opts...)
}

// stampFn carries each value's event time into its group, which
// CoGroupByKey does not keep: a stamped value is the time (milliseconds
// since the Unix epoch, a varint) followed by the value in its input's
// coder, in one []byte, whose coder is the cheapest to group by.
type stampFn struct {
	Value coders.Element

	// stamped serves every value: the only consumer of stampFn's output is
	// the CoGroupByKey, whose tagging encodes each value before emit
	// returns.
	stamped []byte
}

func (f *stampFn) Setup() error { return f.Value.Setup() }

func (f *stampFn) ProcessElement(et beam.EventTime, k beam.X, v beam.Y, emit func(beam.X, []byte)) error {
	var err error
	if f.stamped, err = f.Value.AppendEncode(binary.AppendVarint(f.stamped[:0], et.Milliseconds()), v); err != nil {
		return err
	}
	emit(k, f.stamped)
	return nil
}

// Unstamp splits a value stampFn stamped into its event time
// (milliseconds) and its encoding; ok is false if it does not start with
// a time.
func Unstamp(stamped []byte) (ms int64, value []byte, ok bool) {
	ms, n := binary.Varint(stamped)
	if n <= 0 {
		return 0, nil, false
	}
	return ms, stamped[n:], true
}
