package join

import "time"

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
