package multiway

// This file holds the multi-way join's rules, plain Go: the match rule,
// the rows of an anchor, the cleanup time and the lateness of an element,
// each written once.

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// Anchor is the index of the anchor input.
const Anchor = 0

// MaxInputs is the most inputs a join takes: a row's presence is a 64-bit
// mask.
const MaxInputs = 64

// Input is how input i > 0 joins the anchor: inclusive bounds in
// milliseconds (exclusive ends already moved inward) on ts - ts(anchor),
// and whether the input is optional.
type Input struct {
	Lower, Upper int64
	Optional     bool
}

// Rules decide a multi-way join's result for one key.
type Rules struct {
	// Inputs are inputs 1..N-1; Inputs[0] is unused (the anchor).
	Inputs []Input
	// Emit is when rows are emitted (see package join's Multi).
	Emit match.Emit
	// Lateness is the allowed lateness in milliseconds.
	Lateness int64
}

// Validate reports rules that no row can satisfy.
func (r Rules) Validate() error {
	if n := len(r.Inputs); n < 2 || n > MaxInputs {
		return fmt.Errorf("beamjoin: a multi-way join takes 2 to %d inputs, not %d", MaxInputs, n)
	}
	for i, in := range r.Inputs[1:] {
		if in.Lower > in.Upper {
			return fmt.Errorf("beamjoin: input %d: bounds [%d ms, %d ms] match nothing", i+2, in.Lower, in.Upper)
		}
	}
	if r.Lateness < 0 {
		return fmt.Errorf("beamjoin: allowed lateness %d ms is negative", r.Lateness)
	}
	return nil
}

// Matches is the match rule: an element of input i > 0 at ts matches an
// anchor element at anchorTs iff Lower_i <= ts - anchorTs <= Upper_i.
func (r Rules) Matches(i int, anchorTs, ts int64) bool {
	d := ts - anchorTs
	return r.Inputs[i].Lower <= d && d <= r.Inputs[i].Upper
}

// reach is how far after an anchor element its partners may be: the
// largest upper bound, at least zero.
func (r Rules) reach() int64 {
	h := int64(0)
	for _, in := range r.Inputs[1:] {
		h = max(h, in.Upper)
	}
	return h
}

// Expiry is the cleanup rule: the event time from which an element of
// input i at ts can make no more rows with elements that are not late.
// An anchor's last partner may come at ts + reach; an input element's
// last anchor at ts - Lower_i, whose rows need that anchor's other
// partners, up to one reach later. The allowed lateness is added, and a
// millisecond: an element at exactly the watermark is on time. An anchor
// expires no later than any of its partners, so an anchor's rows are
// whole when it expires (EmitFinal emits them then).
func (r Rules) Expiry(i int, ts int64) int64 {
	t := ts + r.reach() + r.Lateness + 1
	if i != Anchor {
		t -= r.Inputs[i].Lower
	}
	return t
}

// IsLate is the lateness rule: progress is the latest cleanup time of the
// key (match.NoProgress if none). An element is late iff a partner it
// could make a row with may already have been removed, that is iff its
// earliest possible anchor (itself, for an anchor) expired by progress.
// An element no more than the allowed lateness behind the watermark is
// never late, and a removed element always finds a later partner late:
// no row is lost at the cleanup boundary.
func (r Rules) IsLate(i int, ts, progress int64) bool {
	if progress == match.NoProgress {
		return false
	}
	earliest := ts
	if i != Anchor {
		earliest = ts - r.Inputs[i].Upper
	}
	return r.Expiry(Anchor, earliest) <= progress
}

// Elem is a buffered element: its input, event time, encoded value, and
// whether it is in a row (set when its anchors expire).
type Elem struct {
	Input   int
	Time    int64
	Value   []byte
	Matched bool
}

// Buffer is one key's buffered elements, per input in time order (equal
// times in arrival order), and its cleanup progress.
type Buffer struct {
	By       [][]*Elem
	Progress int64
}

// NewBuffer is an empty buffer for n inputs.
func NewBuffer(n int) *Buffer { return &Buffer{By: make([][]*Elem, n), Progress: match.NoProgress} }

// Len is how many elements b holds.
func (b *Buffer) Len() int {
	n := 0
	for _, es := range b.By {
		n += len(es)
	}
	return n
}

// Add buffers e in time order.
func (b *Buffer) Add(e *Elem) {
	es := b.By[e.Input]
	i, _ := slices.BinarySearchFunc(es, e.Time+1, func(x *Elem, t int64) int { return cmp.Compare(x.Time, t) })
	b.By[e.Input] = slices.Insert(es, i, e)
}

// Between is the elements of input i with lo <= time <= hi.
func (b *Buffer) Between(i int, lo, hi int64) []*Elem {
	es := b.By[i]
	from, _ := slices.BinarySearchFunc(es, lo, func(x *Elem, t int64) int { return cmp.Compare(x.Time, t) })
	to, _ := slices.BinarySearchFunc(es, hi+1, func(x *Elem, t int64) int { return cmp.Compare(x.Time, t) })
	return es[from:to]
}

// Partners is, for anchor element a, the matching elements of each input
// i > 0 in b (index 0 is nil).
func (r Rules) Partners(b *Buffer, a *Elem) [][]*Elem {
	p := make([][]*Elem, len(r.Inputs))
	for i := 1; i < len(r.Inputs); i++ {
		p[i] = b.Between(i, a.Time+r.Inputs[i].Lower, a.Time+r.Inputs[i].Upper)
	}
	return p
}

// Rows calls emit with each row of anchor a given its partners per input
// (Partners): the cross product of the partners, with nil for an optional
// input that has none; none if a required input has none. The slice emit
// gets is reused. It returns how many rows there were.
func (r Rules) Rows(a *Elem, partners [][]*Elem, emit func(row []*Elem)) int {
	for i := 1; i < len(partners); i++ {
		if len(partners[i]) == 0 && !r.Inputs[i].Optional {
			return 0
		}
	}
	row := make([]*Elem, len(partners))
	row[Anchor] = a
	n := 0
	var walk func(i int)
	walk = func(i int) {
		if i == len(partners) {
			n++
			emit(row)
			return
		}
		if len(partners[i]) == 0 {
			row[i] = nil
			walk(i + 1)
			return
		}
		for _, e := range partners[i] {
			row[i] = e
			walk(i + 1)
		}
	}
	walk(1)
	return n
}

// RowTime is a row's timestamp: the latest time among its elements.
func RowTime(row []*Elem) int64 {
	t := row[Anchor].Time
	for _, e := range row[1:] {
		if e != nil {
			t = max(t, e.Time)
		}
	}
	return t
}

// AnchorFate is the fate of anchor element a with the given partners:
// matched if it has a row with a partner, unmatched if its one row has
// none (every other input is optional and absent), expired if it has no
// row.
func (r Rules) AnchorFate(partners [][]*Elem) match.Fate {
	any := false
	for i := 1; i < len(partners); i++ {
		if len(partners[i]) == 0 && !r.Inputs[i].Optional {
			return match.Expired
		}
		any = any || len(partners[i]) > 0
	}
	if any {
		return match.Matched
	}
	return match.Unmatched
}
