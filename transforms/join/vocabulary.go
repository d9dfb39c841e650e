package join

// This file holds the join's words, Side, Type and Emit: their constants,
// their names in text (String, and the encoding.TextMarshaler and
// TextUnmarshaler that flags and JSON use), and their counterparts in the
// matching core.

import (
	"fmt"
	"strings"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// Side says which input an element came from.
type Side uint8

// The two sides of a join.
const (
	// Left is the first input, the one the bounds are measured from.
	Left Side = iota
	// Right is the second input.
	Right
)

// Type is a join type: which sides keep their elements that never match.
type Type uint8

// The join types. Each is an Option; Inner is the default.
const (
	// Inner emits pairs only.
	Inner Type = iota
	// LeftOuter also emits left elements that have no partner.
	LeftOuter
	// RightOuter also emits right elements that have no partner.
	RightOuter
	// FullOuter also emits elements of either side that have no partner.
	FullOuter
)

// Emit is an outer-emission mode of the interval join: when an element
// without a partner is reported.
type Emit uint8

// The emission modes. Each is an Option; EmitImmediate is the default.
const (
	// EmitImmediate reports an outer element as unmatched as soon as it
	// arrives without a buffered partner; a partner that arrives later
	// produces the pair as a further record.
	EmitImmediate Emit = iota
	// EmitFinal reports an outer element as unmatched exactly once, when
	// event time proves no partner can still come, and only if it never
	// matched. The record keeps the element's own timestamp; the transform
	// holds the output watermark so it is never late downstream.
	EmitFinal
	// EmitRetract behaves as EmitImmediate and, when an element reported
	// unmatched meets its first partner, emits a KindRetract record for the
	// unmatched one before the pair. The changelog nets to EmitFinal's result.
	EmitRetract
)

// The names of the words, as String writes them and UnmarshalText reads
// them: the beamjoin command's flag values and the JSON output's.
var (
	sideWords = words{what: "side", kind: "Side", names: []string{Left: "left", Right: "right"}}
	typeWords = words{what: "join type", kind: "Type",
		names: []string{Inner: "inner", LeftOuter: "left", RightOuter: "right", FullOuter: "full"}}
	emitWords = words{what: "emission mode", kind: "Emit",
		names: []string{EmitImmediate: "immediate", EmitFinal: "final", EmitRetract: "retract"}}
)

// String returns "left" or "right".
func (s Side) String() string { return sideWords.name(uint8(s)) }

// MarshalText returns the side's String form; an unknown side is an error.
func (s Side) MarshalText() ([]byte, error) { return sideWords.marshal(uint8(s)) }

// UnmarshalText reads a side from its String form.
func (s *Side) UnmarshalText(text []byte) error { return sideWords.unmarshal(text, (*uint8)(s)) }

// String returns "inner", "left", "right" or "full".
func (t Type) String() string { return typeWords.name(uint8(t)) }

// MarshalText returns the join type's String form; an unknown type is an
// error.
func (t Type) MarshalText() ([]byte, error) { return typeWords.marshal(uint8(t)) }

// UnmarshalText reads a join type from its String form.
func (t *Type) UnmarshalText(text []byte) error { return typeWords.unmarshal(text, (*uint8)(t)) }

// String returns "immediate", "final" or "retract".
func (e Emit) String() string { return emitWords.name(uint8(e)) }

// MarshalText returns the emission mode's String form; an unknown mode is
// an error.
func (e Emit) MarshalText() ([]byte, error) { return emitWords.marshal(uint8(e)) }

// UnmarshalText reads an emission mode from its String form.
func (e *Emit) UnmarshalText(text []byte) error { return emitWords.unmarshal(text, (*uint8)(e)) }

// words names the values 0, 1, … of one of the join's words.
type words struct {
	what, kind string // "join type" in errors, "Type" for an unknown value
	names      []string
}

func (w words) name(v uint8) string {
	if int(v) < len(w.names) {
		return w.names[v]
	}
	return fmt.Sprintf("%s(%d)", w.kind, v)
}

func (w words) marshal(v uint8) ([]byte, error) {
	if int(v) >= len(w.names) {
		return nil, fmt.Errorf("beamjoin: unknown %s %s", w.what, w.name(v))
	}
	return []byte(w.names[v]), nil
}

func (w words) unmarshal(text []byte, v *uint8) error {
	for i, n := range w.names {
		if n == string(text) {
			*v = uint8(i)
			return nil
		}
	}
	last := len(w.names) - 1
	return fmt.Errorf("beamjoin: unknown %s %q (want %s or %s)", w.what, text, strings.Join(w.names[:last], ", "), w.names[last])
}

// valid reports whether v is one of the named values.
func (w words) valid(v uint8) bool { return int(v) < len(w.names) }

// The matching core numbers its sides, join types and emission modes as
// this package does, so the conversions are plain; coreWordsAgree in
// vocabulary_test.go checks it.

func (s Side) core() match.Side { return match.Side(s) }
func (t Type) core() match.Type { return match.Type(t) }
func (e Emit) core() match.Emit { return match.Emit(e) }

// sideOf is the join's name for a side of the core.
func sideOf(s match.Side) Side { return Side(s) }
