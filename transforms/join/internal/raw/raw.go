// Package raw holds the records that pass between package join and its
// engines: Encoded, an input value tagged with its side and encoded with
// its input's coder, which the engines take; Record, a join record before
// its values are decoded, and FateRecord, what became of an element, which
// they emit; and the counters every engine counts them by. Package join
// decodes the records into the author's types; the engines never see
// those.
//
// It rests on the Beam Go SDK, the coders package and the matching core's
// vocabulary (transforms/internal/match). docs/design/packages.md says
// which package holds what.
package raw

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

func init() {
	register.DoFn3x1[beam.X, beam.Y, func(beam.X, Encoded), error](&encodeFn{})
	register.Emitter2[beam.X, Encoded]()
	register.Emitter3[beam.EventTime, beam.X, Record]()
	register.Emitter3[beam.EventTime, beam.X, Encoded]()
	register.Emitter3[beam.EventTime, beam.X, FateRecord]()
}

// Encoded is a value tagged with its side and encoded with its input's
// coder. For the multi-way join, Side is the input's index (0 for the
// anchor), up to 63.
type Encoded struct {
	Side  uint8
	Value []byte
}

// Encode tags the values of col, a PCollection<KV<K,V>> of side s, with
// their side and encodes them with value, the coder of V, in scope s:
// PCollection<KV<K, Encoded>>.
func Encode(s beam.Scope, side match.Side, value coders.Element, col beam.PCollection) (beam.PCollection, error) {
	out, err := beam.TryParDo(s, &encodeFn{Side: side, Value: value}, col)
	if err != nil {
		return beam.PCollection{}, err
	}
	return out[0], nil
}

// encodeFn tags one side's values and encodes them.
type encodeFn struct {
	Side  match.Side
	Value coders.Element
}

// Setup readies the value coder.
func (f *encodeFn) Setup() error { return f.Value.Setup() }

// ProcessElement encodes v and tags it with the side.
func (f *encodeFn) ProcessElement(k beam.X, v beam.Y, emit func(beam.X, Encoded)) error {
	b, err := f.Value.Encode(v)
	if err != nil {
		return err
	}
	emit(k, Encoded{Side: uint8(f.Side), Value: b})
	return nil
}

// Flatten flattens the join op's two sides into one PCollection, in scope
// s: the tagged sides for a streaming path, each side gathered for a
// bounded one.
func Flatten(s beam.Scope, op string, sides [2]beam.PCollection) (beam.PCollection, error) {
	// Both sides are in the global window, which beam.Flatten needs;
	// TryFlatten returns, rather than panics on, anything else it refuses.
	all, err := beam.TryFlatten(s, sides[match.Left], sides[match.Right])
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return all, nil
}

// Kind says what a Record is, numbered as join.Kind.
type Kind uint8

// The kinds of a Record; join.Kind has the same values.
const (
	// Pair is a left and a right element that match.
	Pair Kind = iota
	// Unmatched is an outer element with no partner.
	Unmatched
	// Retract withdraws an earlier record and carries its values.
	Retract
)

// kindNames are the kinds' names, join.Kind's.
var kindNames = [...]string{Pair: "pair", Unmatched: "unmatched", Retract: "retract"}

// String returns "pair", "unmatched" or "retract", as join.Kind does.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Record is a join record before its values are decoded. Its element
// timestamp is the record's time.
type Record struct {
	Kind                Kind
	HasLeft, HasRight   bool
	LeftTime, RightTime int64
	Left, Right         []byte
}

// FateRecord says what became of an element: its side (for the multi-way
// join, its input's index) and Outcome. Its element timestamp is the
// element's.
type FateRecord struct {
	Side, Outcome uint8
}

// Outcome is a FateRecord's outcome, numbered as join.Outcome: a
// match.Fate, or Grouped.
type Outcome uint8

// Grouped is the outcome of an element of CoGroup in at least one group;
// the outcomes before it are the matching core's fates.
const Grouped = Outcome(match.Late) + 1

// OutcomeOf is the outcome of the matching core's fate f.
func OutcomeOf(f match.Fate) Outcome { return Outcome(f) }

// String returns the outcome's counter name: "matched", ..., "grouped".
func (o Outcome) String() string {
	if o == Grouped {
		return "grouped"
	}
	return match.Fate(o).String()
}

// SideName is a side's name in counters: "left" or "right".
var SideName = [2]string{match.Left: "left", match.Right: "right"}

// Namespace is the Beam metrics namespace of every beamjoin counter,
// join.Namespace.
const Namespace = "beamjoin"

// Counters are the counters of what every engine counts alike, per side
// the elements in, the unmatched records out and each element's fate, and
// the pairs, retractions and stale timer firings. A Beam counter is its
// namespace and name, so an engine that counts more keeps the rest itself.
type Counters struct {
	In, UnmatchedOut [2]beam.Counter
	Fate             [2][match.Late + 1]beam.Counter
	Pairs            beam.Counter
	Retractions      beam.Counter
	StaleFirings     beam.Counter
}

// Count is the engines' Counters.
var Count = func() (c Counters) {
	for s, name := range SideName {
		c.In[s] = beam.NewCounter(Namespace, name+"_in")
		c.UnmatchedOut[s] = beam.NewCounter(Namespace, name+"_unmatched_out")
		for f := match.Matched; f <= match.Late; f++ {
			c.Fate[s][f] = beam.NewCounter(Namespace, name+"_"+f.String())
		}
	}
	c.Pairs = beam.NewCounter(Namespace, "pairs_out")
	c.Retractions = beam.NewCounter(Namespace, "retractions_out")
	c.StaleFirings = beam.NewCounter(Namespace, "stale_firings")
	return c
}()
