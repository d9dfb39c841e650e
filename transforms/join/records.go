package join

// This file holds what the joins return: Outputs, the record types of
// Interval and AsOf (Result, LateElement, their Kind) and of every join's
// fates (Fate, Outcome), and RegisterTypes, which registers every record
// type with Beam, with the check each transform makes at construction
// that the types it emits are registered. Window's, CoGroup's and
// Connect's own record types are in their files.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
)

// Namespace is the Beam metrics namespace of every beamjoin counter.
const Namespace = "beamjoin"

// Outputs is what a join returns: its records, and the outputs that
// options ask for. A PCollection that a join does not produce is the zero
// beam.PCollection, whose IsValid method returns false.
type Outputs struct {
	// Records are the join's records: Result[K,L,R] for Interval and AsOf,
	// WindowResult[K,L,R] for Window, Group[K,L,R] for CoGroup,
	// MultiResult[K,V] for Multi.
	Records beam.PCollection
	// Late are the elements the join judged late: LateElement[K,L,R] for
	// Interval and AsOf, always; MultiLateElement[K,V] for Multi, always;
	// WindowLateElement[K,L,R] for Window and CoGroup, with ReportLate only.
	Late beam.PCollection
	// Fates are Fate[K] records (MultiFate[K] for Multi), exactly one per
	// input element, with TrackFates only.
	Fates beam.PCollection
}

// Kind says what a join record is.
type Kind uint8

const (
	// KindPair is a left and a right element that match.
	KindPair Kind = iota
	// KindUnmatched is an outer element with no partner: one side is nil.
	KindUnmatched
	// KindRetract withdraws an earlier record (EmitRetract only) and
	// carries its values: in Interval, a KindUnmatched record of the same
	// element, once its first partner comes; in AsOf, a left element's
	// pair or unmatched record, once a later-arriving version supersedes
	// its match.
	KindRetract
)

var kindWords = words{what: "record kind", kind: "Kind", names: []string{KindPair: "pair", KindUnmatched: "unmatched", KindRetract: "retract"}}

// String returns "pair", "unmatched" or "retract".
func (k Kind) String() string { return kindWords.name(uint8(k)) }

// Result is one record of an interval join of PCollection<KV<K,L>> and
// PCollection<KV<K,R>>. Left or Right is nil when that side is absent, so an
// absent value is never mistaken for a zero one; its time is then the zero
// time.Time.
//
// The record's element timestamp is Time: max(LeftTime, RightTime) for a
// pair, the element's own time for unmatched and retract records.
//
// Beam's workers, in the launching process or another, know a Result
// instance only if the program registers it in an init function, with
// RegisterTypes.
type Result[K, L, R any] struct {
	Kind      Kind
	Key       K
	Left      *L
	Right     *R
	LeftTime  time.Time
	RightTime time.Time
	Time      time.Time
}

// LateElement is an element the interval join judged late (an element is
// late iff one of its potential partners may already have been cleaned up).
// It was neither joined nor buffered. Exactly one of Left and Right is set,
// the one named by Side; Time is its event time, also its element timestamp.
//
// Like Result, a LateElement instance reaches Beam's workers only if the
// program registers it with RegisterTypes, even when the late output is not
// used: the join builds a LateElement for every late element.
type LateElement[K, L, R any] struct {
	Side  Side
	Key   K
	Time  time.Time
	Left  *L
	Right *R
}

// Outcome is what finally became of an input element of a join. Every
// element that reaches a join has exactly one, so per side the outcomes
// add up to the elements in.
type Outcome uint8

// The outcomes. An element of Window is matched, unmatched, expired or
// late; an element of Interval matched, unmatched, expired, evicted or
// late; an element of CoGroup is grouped or late.
const (
	// OutcomeMatched: in at least one pair.
	OutcomeMatched Outcome = iota
	// OutcomeUnmatched: of an outer side, reported unmatched and in no pair.
	OutcomeUnmatched
	// OutcomeExpired: of an inner side, in no pair; it was forgotten when
	// it could no longer match.
	OutcomeExpired
	// OutcomeEvicted: removed by a per-key size cap (the interval join's
	// MaxBufferedPerKey).
	OutcomeEvicted
	// OutcomeLate: too late to be joined or grouped; it is in the late
	// output.
	OutcomeLate
	// OutcomeGrouped: in at least one Group of CoGroup.
	OutcomeGrouped
)

var outcomeWords = words{what: "outcome", kind: "Outcome", names: []string{
	OutcomeMatched: "matched", OutcomeUnmatched: "unmatched", OutcomeExpired: "expired",
	OutcomeEvicted: "evicted", OutcomeLate: "late", OutcomeGrouped: "grouped",
}}

// String returns "matched", "unmatched", "expired", "evicted", "late" or
// "grouped": the name of the outcome's counters (left_matched, ...).
func (o Outcome) String() string { return outcomeWords.name(uint8(o)) }

// MarshalText returns the outcome's String form; an unknown outcome is an
// error.
func (o Outcome) MarshalText() ([]byte, error) { return outcomeWords.marshal(uint8(o)) }

// UnmarshalText reads an outcome from its String form.
func (o *Outcome) UnmarshalText(text []byte) error { return outcomeWords.unmarshal(text, (*uint8)(o)) }

// Fate is what became of one input element of a join: its side, key and
// event time, and its Outcome. Its element timestamp is Time; a join emits
// it once the outcome is final, so it is usually behind the watermark:
// count fates in the global window (as beam.Combine does by default).
type Fate[K any] struct {
	Side    Side
	Key     K
	Time    time.Time
	Outcome Outcome
}

// RegisterTypes registers with Beam every type the joins emit for keys K,
// left values L and right values R (Result, LateElement, WindowResult,
// WindowLateElement, Group, Tagged and Fate), and K, L and R themselves
// when they are named types. Call it from an init function of the program,
// once for each K, L, R it joins:
//
//	func init() { join.RegisterTypes[string, Order, Payment]() }
//
// Beam's workers find a type of a PCollection or of a DoFn's field by the
// name it was registered under. A package cannot register the instances
// of its generic types that its users make, and a worker that does not know
// one rebuilds it as an unnamed struct and fails on its first record. That
// holds for Prism's workers in the launching process too, and for workers
// in other processes (Dataflow, Flink, Prism's PROCESS environment), which
// run the program's own binary and so its init functions. Each transform
// checks at construction that its types are registered and, if not, fails
// with an error that names this call. Beam refuses registrations once
// beam.Init has run, so the call belongs in init, not in main.
func RegisterTypes[K, L, R any]() {
	for _, t := range []reflect.Type{
		reflect.TypeFor[Result[K, L, R]](),
		reflect.TypeFor[LateElement[K, L, R]](),
		reflect.TypeFor[WindowResult[K, L, R]](),
		reflect.TypeFor[WindowLateElement[K, L, R]](),
		reflect.TypeFor[Group[K, L, R]](),
		reflect.TypeFor[Tagged[L, R]](),
		reflect.TypeFor[Fate[K]](),
		reflect.TypeFor[K](),
		reflect.TypeFor[L](),
		reflect.TypeFor[R](),
	} {
		if _, ok := runtime.TypeKey(t); ok && t.Kind() != reflect.Interface {
			beam.RegisterType(t)
		}
	}
}

// checkRegistered reports the first of types that Beam's registry does
// not hold, as the transform op's error naming the RegisterTypes call to
// add.
func checkRegistered[K, L, R any](op string, types ...reflect.Type) error {
	return checkRegisteredBy(op, fmt.Sprintf("join.RegisterTypes[%s, %s, %s]()", typeName[K](), typeName[L](), typeName[R]()), types...)
}

// checkRegisteredBy reports the first of types that Beam's registry does
// not hold, as the transform op's error naming call, the call that
// registers them.
func checkRegisteredBy(op, call string, types ...reflect.Type) error {
	for _, t := range types {
		key, ok := runtime.TypeKey(t)
		if !ok {
			continue
		}
		if _, ok := runtime.LookupType(key); !ok {
			return fmt.Errorf("beamjoin: %s: the type %v is not registered with Beam, so a worker could not decode it: "+
				"add %s to an init function of the program", op, t, call)
		}
	}
	return nil
}

// typeName writes T as Go source names it from another package
// ("main.Order", "string").
func typeName[T any]() string { return reflect.TypeFor[T]().String() }
