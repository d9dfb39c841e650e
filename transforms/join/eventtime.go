package join

// This file holds what the event-time joins, Interval and AsOf, do around
// their own step: check the inputs and registration, move both inputs into
// the global window, encode and tag them (into one PCollection, for the
// streaming paths), and decode the step's records and late elements back
// into the inputs' windowing.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowing"
)

// eventTimeInput is both inputs of an event-time join, checked and tagged:
// Sides holds each in the global window as encoded, side-tagged values
// keyed by their key, ready to be flattened (flattenSides) for the join's
// own step.
type eventTimeInput struct {
	Sides                [2]beam.PCollection // by Side
	Key, Left, Right     coders.Element      // the key's and each side's value coder
	windows              windowing.Inputs
	resultType, lateType reflect.Type
}

// tagEventTime checks the inputs of the event-time join op (their types,
// the registration of Result and LateElement, their shared windowing) and
// tags each side's values in the global window.
func tagEventTime[K, L, R any](s beam.Scope, op string, left, right beam.PCollection) (eventTimeInput, error) {
	if err := checkInputs[K, L, R](op, left, right); err != nil {
		return eventTimeInput{}, err
	}
	in := eventTimeInput{resultType: reflect.TypeFor[Result[K, L, R]](), lateType: reflect.TypeFor[LateElement[K, L, R]]()}
	if err := checkRegistered[K, L, R](op, in.resultType, in.lateType); err != nil {
		return eventTimeInput{}, err
	}
	var err error
	if in.windows, err = windowing.Shared(op, left, right); err != nil {
		return eventTimeInput{}, err
	}
	left, right = in.windows.IntoGlobal(s.Scope("left"), left), in.windows.IntoGlobal(s.Scope("right"), right)
	if in.Left, err = coders.KVValue(left); err != nil {
		return eventTimeInput{}, err
	}
	if in.Right, err = coders.KVValue(right); err != nil {
		return eventTimeInput{}, err
	}
	if in.Key, err = coders.KVKey(left); err != nil {
		return eventTimeInput{}, err
	}
	if in.Sides[Left], err = raw.Encode(s.Scope("left"), match.Left, in.Left, left); err != nil {
		return eventTimeInput{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	if in.Sides[Right], err = raw.Encode(s.Scope("right"), match.Right, in.Right, right); err != nil {
		return eventTimeInput{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return in, nil
}

// outputs decodes the join step's raw records and late elements into
// Result and LateElement values and gives them the inputs' windowing back,
// with at least the join's allowed lateness (see windowing.Inputs.Restore).
func (in eventTimeInput) outputs(s beam.Scope, raw, rawLate beam.PCollection, lateness time.Duration) Outputs {
	results := beam.ParDo(s.Scope("results"), &resultFn{Out: beam.EncodedType{T: in.resultType}, Left: in.Left, Right: in.Right}, raw,
		beam.TypeDefinition{Var: beam.YType, T: in.resultType})
	late := beam.ParDo(s.Scope("late"), &lateFn{Out: beam.EncodedType{T: in.lateType}, Left: in.Left, Right: in.Right}, rawLate,
		beam.TypeDefinition{Var: beam.YType, T: in.lateType})
	return Outputs{Records: in.windows.Restore(s.Scope("results"), results, lateness), Late: in.windows.Restore(s.Scope("late"), late, lateness)}
}
