package join_test

// This file holds the differential test's oracle: what the interval join
// must do with a two-stream workload, written from SPEC.md §2 and §6 alone.
// It imports nothing of the project and shares no code with the join, the
// matching core or their tests, so that a misreading of the contract in
// the code is not repeated here. Two documented facts of the join package
// are used besides the SPEC, each where it is used: CleanupEvery's placement
// of cleanup timers (on its grid in the split layout, SplitKeys) and its
// default, and MaxBufferedPerKey's rule that on equal times the left
// element is evicted first.
//
// The oracle works on a case: the join's options and the elements in the
// order the join receives them, each with the watermark at its arrival
// (the latest timer time the runner may already have fired for its key).
// How a test makes the runner deliver them in that order is the harness's
// business (differential_test.go).

import (
	"fmt"
	"slices"
	"strings"
)

// oSide is a side in the oracle's own words.
type oSide uint8

const (
	oLeft oSide = iota
	oRight
)

func (s oSide) other() oSide { return 1 - s }

func (s oSide) String() string {
	if s == oLeft {
		return "left"
	}
	return "right"
}

// oType is a join type (SPEC §2.2).
type oType uint8

const (
	oInner oType = iota
	oLeftOuter
	oRightOuter
	oFullOuter
)

func (t oType) String() string {
	return [...]string{"Inner", "LeftOuter", "RightOuter", "FullOuter"}[t]
}

// oEmit is an outer-emission mode (SPEC §2.3).
type oEmit uint8

const (
	oImmediate oEmit = iota
	oFinal
	oRetracting
)

func (e oEmit) String() string { return [...]string{"EmitImmediate", "EmitFinal", "EmitRetract"}[e] }

// oSpec is a case's join options. Times are milliseconds.
type oSpec struct {
	Lower, Upper         int64
	LowerExcl, UpperExcl bool
	Type                 oType
	Emit                 oEmit
	Lateness             int64
	MaxBuffered          int   // 0: no cap
	CleanupEvery         int64 // 0: the default, derived from the bounds (every)
	Width                int64 // the SplitKeys width of the split run, ms (0: the default)
	// Grid: cleanup timers on the grid of CleanupEvery, as in the split
	// layout (join.SplitKeys), rather than CleanupEvery less a
	// millisecond after the earliest expiry.
	Grid bool
	// Horizon is the join's ProgressHorizon in milliseconds (the
	// runner-model harness sets it); 0: the default, longer than any
	// case, so that no key forgets its progress within one; horizonZero:
	// ProgressHorizon(0).
	Horizon int64
	// UniqueLeft: the join takes join.UniqueLeft (the runner-model
	// harness, on cases with one left element per key), and buffers no
	// right element that arrives while the key's left element is.
	UniqueLeft bool
}

// bounds is the inclusive range of ts(r) - ts(l) (SPEC §2.1: an exclusive
// end is the inclusive one a millisecond inward).
func (sp oSpec) bounds() (lo, hi int64) {
	lo, hi = sp.Lower, sp.Upper
	if sp.LowerExcl {
		lo++
	}
	if sp.UpperExcl {
		hi--
	}
	return lo, hi
}

// matches is the match rule of SPEC §2.1, for a left element at lt and a
// right one at rt with the same key.
func (sp oSpec) matches(lt, rt int64) bool {
	lo, hi := sp.bounds()
	return lo <= rt-lt && rt-lt <= hi
}

// pairOf says whether elements a and b pair, in either role.
func (sp oSpec) pairOf(a, b oElem) bool {
	if a.Side == b.Side || a.Key != b.Key {
		return false
	}
	if a.Side == oLeft {
		return sp.matches(a.Time, b.Time)
	}
	return sp.matches(b.Time, a.Time)
}

// outer says whether unmatched elements of side s are reported (§2.2).
func (sp oSpec) outer(s oSide) bool {
	switch sp.Type {
	case oLeftOuter:
		return s == oLeft
	case oRightOuter:
		return s == oRight
	case oFullOuter:
		return true
	}
	return false
}

// deadline is the last watermark at which an element of side s at ts can
// still be matched (§2.4): a left element until event time passes
// ts + max(upper,0), a right one until ts + max(-lower,0), plus the
// allowed lateness; "a partner whose timestamp equals the watermark still
// joins", so the watermark may equal the deadline.
func (sp oSpec) deadline(s oSide, ts int64) int64 {
	lo, hi := sp.bounds()
	reach := max(hi, 0)
	if s == oRight {
		reach = max(-lo, 0)
	}
	return ts + reach + sp.Lateness
}

// every is the case's CleanupEvery in milliseconds: the option's, or its
// default (join.CleanupEvery: "a quarter of max(upper, 0) + max(-lower, 0)
// + twice the allowed lateness ... (at least one millisecond)").
func (sp oSpec) every() int64 {
	if sp.CleanupEvery != 0 {
		return sp.CleanupEvery
	}
	lo, hi := sp.bounds()
	return max((max(hi, 0)+max(-lo, 0)+2*sp.Lateness)/4, 1)
}

// removal is the watermark at which the element has certainly been removed:
// the first millisecond after its deadline, plus CleanupEvery less a
// millisecond (join.CleanupEvery: "a key's cleanup timer fires d less a
// millisecond after the earliest expiry among its elements, so that one
// firing removes every element that expires within d of the earliest").
// A key's timer is never later than that for any of its elements; it can
// be earlier (oSim.timer). On Prism a timer fires once the watermark
// reaches its time, and the script's next event waits for it.
func (sp oSpec) removal(s oSide, ts int64) int64 {
	return sp.deadline(s, ts) + sp.every()
}

// lateAfter is the latest watermark at which no potential partner of an
// element of side s at ts can have been removed: the deadline of its
// earliest potential partner. Potential partners of a left element lie in
// [ts+lo, ts+hi], of a right one in [ts-hi, ts-lo]; the deadline grows with
// the partner's time, so the earliest is the first.
func (sp oSpec) lateAfter(s oSide, ts int64) int64 {
	lo, hi := sp.bounds()
	from := ts + lo
	if s == oRight {
		from = ts - hi
	}
	return sp.deadline(s.other(), from)
}

// oElem is one input element. Values are unique within a case ("l3",
// "r7"), so they name the element in the join's records.
type oElem struct {
	Side oSide
	Key  string
	Time int64
	Val  string
}

func (e oElem) String() string { return fmt.Sprintf("%v %s %s @ %d", e.Side, e.Key, e.Val, e.Time) }

// oStep is one TestStream event: an element, or (Elem nil) a watermark
// advance to Watermark.
type oStep struct {
	Elem      *oElem
	Watermark int64
}

// oArrival is an element as the join sees it: its index in the case's
// arrival order, the watermark when it arrives (noWatermark before the
// first advance), which bounds what the join can know, and the cut its
// key's timers have fired up to: every timer at or before Cut has fired,
// none after it since the previous arrival's cut. A runner that fires a
// key's timers whenever the watermark passes them has Cut equal to
// Watermark; one that brings a key's timers with its next work item (the
// Go SDK fires timers set in a bundle only after it) has Cut below it
// when the join has set a timer behind the watermark.
type oArrival struct {
	Index     int
	Elem      oElem
	Watermark int64
	Cut       int64
}

const noWatermark = int64(-1 << 63)

// oKind is a record kind (§2.3).
type oKind uint8

const (
	oPairRec oKind = iota
	oUnmatchedRec
	oRetractRec
)

func (k oKind) String() string { return [...]string{"pair", "unmatched", "retract"}[k] }

// oRecord is one record of the join: a pair, or an unmatched or retract
// record of one element (the other side nil). Time is the record's
// timestamp: max of the two times for a pair, the element's own otherwise
// (§2.2, §2.3).
type oRecord struct {
	Kind        oKind
	Key         string
	Left, Right *oElem
	Time        int64
}

func (r oRecord) String() string {
	side := func(e *oElem) string {
		if e == nil {
			return "-"
		}
		return fmt.Sprintf("%s@%d", e.Val, e.Time)
	}
	return fmt.Sprintf("%v %s %s %s t=%d", r.Kind, r.Key, side(r.Left), side(r.Right), r.Time)
}

// oFate is what became of an element (§6).
type oFate uint8

const (
	fMatched oFate = iota
	fUnmatched
	fExpired
	fEvicted
	fLate
)

func (f oFate) String() string {
	return [...]string{"matched", "unmatched", "expired", "evicted", "late"}[f]
}

func pairRecord(a, b oElem) oRecord {
	if a.Side == oRight {
		a, b = b, a
	}
	return oRecord{Kind: oPairRec, Key: a.Key, Left: &a, Right: &b, Time: max(a.Time, b.Time)}
}

func singleRecord(k oKind, e oElem) oRecord {
	r := oRecord{Kind: k, Key: e.Key, Time: e.Time}
	if e.Side == oLeft {
		r.Left = &e
	} else {
		r.Right = &e
	}
	return r
}

// mayBeLate reports whether the join may judge the arrival late (§2.5: an
// element is late iff one of its potential partners may already have been
// removed). A partner can only have been removed once the watermark has
// passed its deadline, so an element whose earliest potential partner's
// deadline the watermark has not passed is never late: otherwise a pair
// would be lost at the cleanup boundary (§2.4). Beyond that, whether it is
// late depends on what the join knows of the watermark, which the oracle
// bounds from below (see oOutcome.MustLate and KnownLate).
func (sp oSpec) mayBeLate(a oArrival) bool {
	return a.Watermark != noWatermark && a.Watermark > sp.lateAfter(a.Elem.Side, a.Elem.Time)
}

// oOutcome is what the join must produce for one key, given which of its
// elements it judged late: the records, each element's fate, and the
// elements that must have been late, in two kinds:
//   - MustLate: a potential partner had certainly been removed while the
//     key held data, so the key cannot have forgotten its progress;
//   - KnownLate: the others that arrived more than the allowed lateness
//     behind a cleanup timer that had certainly fired on their key. §2.5:
//     "an element that arrives after that [its key forgot its progress]
//     and is more than the allowed lateness behind what the join knows of
//     the watermark (e.g. the latest timer firing it has seen, on any key)
//     is still late". The oracle counts as known only the firings on the
//     element's own key.
type oOutcome struct {
	Records   []oRecord
	MustLate  []int // arrival indexes
	KnownLate []int
	Fates     map[int]oFate
	Evicted   int
}

// oBuffered is an element held by the join.
type oBuffered struct {
	a        oArrival
	matched  bool // in a pair already
	reported bool // reported unmatched on arrival (Immediate, Retract)
}

// oSim plays one key's arrivals through the rules of §2.3–§2.5.
type oSim struct {
	sp       oSpec
	buf      []oBuffered
	progress int64 // the deadline up to which cleanup has certainly removed partners, or noWatermark
	fired    int64 // the latest cleanup firing certainly seen on the key, or noWatermark
	// forgetAt is when the key, holding nothing, forgets fired (SPEC
	// §2.5's horizon, join.ProgressHorizon), if forgetting is set.
	forgetAt   int64
	forgetting bool
	out        oOutcome
}

func (s *oSim) clone() *oSim {
	c := *s
	c.buf = slices.Clone(s.buf)
	c.out.Records = slices.Clone(s.out.Records)
	c.out.MustLate = slices.Clone(s.out.MustLate)
	c.out.KnownLate = slices.Clone(s.out.KnownLate)
	c.out.Fates = make(map[int]oFate, len(s.out.Fates))
	for k, v := range s.out.Fates {
		c.out.Fates[k] = v
	}
	return &c
}

// leave records x leaving the buffer: by cleanup (evicted false) or the
// size cap. Under Final an outer element that never matched is reported
// now, with its own timestamp; Immediate and Retract reported it on arrival.
func (s *oSim) leave(x oBuffered, evicted bool) {
	if s.sp.outer(x.a.Elem.Side) && !x.matched && s.sp.Emit == oFinal {
		s.out.Records = append(s.out.Records, singleRecord(oUnmatchedRec, x.a.Elem))
	}
	switch {
	case evicted:
		s.out.Fates[x.a.Index] = fEvicted
		s.out.Evicted++
	case x.matched:
		s.out.Fates[x.a.Index] = fMatched
	case s.sp.outer(x.a.Elem.Side):
		s.out.Fates[x.a.Index] = fUnmatched
	default:
		s.out.Fates[x.a.Index] = fExpired
	}
}

// timer is where the key's cleanup timer is: CleanupEvery less a
// millisecond after the earliest first millisecond after a deadline among
// the buffered elements (join.CleanupEvery), or with Grid that first
// millisecond rounded up to a multiple of CleanupEvery (join.SplitKeys);
// false if nothing is buffered.
func (s *oSim) timer() (int64, bool) {
	if len(s.buf) == 0 {
		return 0, false
	}
	first := int64(1 << 62)
	for _, x := range s.buf {
		first = min(first, s.sp.deadline(x.a.Elem.Side, x.a.Elem.Time)+1)
	}
	if s.sp.Grid {
		// join.SplitKeys: "a key's cleanup for an expiry t runs when event
		// time reaches t rounded up to the next multiple" of CleanupEvery.
		return oRoundUp(first, s.sp.every()), true
	}
	return first + s.sp.every() - 1, true
}

// cleanUp removes what cleanup has removed by watermark w: each firing of
// the key's timer at or before w removes every element whose deadline is
// before the firing's time, and the timer moves to the earliest deadline
// left. The cleanup progress (how far partners may have been removed) is
// the latest deadline removed; once the key holds nothing it may be
// forgotten (§2.4: "A key may forget its cleanup progress once its data
// is gone"), so it is only relied on while the key holds data.
//
// With a horizon (oSpec.Horizon), a key whose cleanup emptied it at
// firing t forgets even that at forgetTime(t) (join.ProgressHorizon):
// from then on it is a new key.
func (s *oSim) cleanUp(w int64) {
	for {
		t, ok := s.timer()
		if !ok && s.forgetting && s.forgetAt <= w {
			s.fired, s.forgetting = noWatermark, false
		}
		if !ok || t > w {
			break
		}
		kept := s.buf[:0]
		for _, x := range s.buf {
			if d := s.sp.deadline(x.a.Elem.Side, x.a.Elem.Time); d < t {
				s.progress = max(s.progress, d)
				s.fired = max(s.fired, t)
				s.leave(x, false)
				continue
			}
			kept = append(kept, x)
		}
		s.buf = kept
		if len(s.buf) == 0 && s.sp.Horizon != 0 {
			s.forgetAt, s.forgetting = s.sp.forgetTime(t), true
		}
	}
	if len(s.buf) == 0 {
		s.progress = noWatermark
	}
}

// horizonZero is oSpec.Horizon (and modelSchedule.Horizon) for
// join.ProgressHorizon(0), whose 0 means the default.
const horizonZero = -1

// forgetTime is when a key whose cleanup firing at t emptied it forgets
// its progress: in the default layout the horizon after t, rounded up to
// CleanupEvery, or at t itself with a horizon of zero; in the split layout
// (Grid) one join memory (the span, the allowed lateness and a
// millisecond) and the horizon after t, rounded up.
func (sp oSpec) forgetTime(t int64) int64 {
	h := max(sp.Horizon, 0)
	if sp.Grid {
		lo, hi := sp.bounds()
		memory := max(hi, 0) + max(-lo, 0) + sp.Lateness + 1
		return oRoundUp(t+memory+h, sp.every())
	}
	if h == 0 {
		return t
	}
	return oRoundUp(t+h, sp.every())
}

// oRoundUp rounds t up to a multiple of every (join.CleanupEvery's
// granularity of forgetting).
func oRoundUp(t, every int64) int64 {
	if every <= 1 {
		return t
	}
	if r := t % every; r > 0 {
		return t - r + every
	} else if r < 0 {
		return t - r
	}
	return t
}

// arrive plays one arrival; late says whether the join judged it late.
func (s *oSim) arrive(a oArrival, late bool) {
	s.cleanUp(a.Cut)
	// It must be late if a potential partner has certainly been removed
	// while the key kept its data, so that the key cannot have forgotten.
	switch lateAfter := s.sp.lateAfter(a.Elem.Side, a.Elem.Time); {
	case s.progress != noWatermark && s.progress >= lateAfter:
		s.out.MustLate = append(s.out.MustLate, a.Index)
	case s.fired != noWatermark && s.fired > lateAfter:
		s.out.KnownLate = append(s.out.KnownLate, a.Index)
	}
	if late {
		s.out.Fates[a.Index] = fLate
		return
	}
	decided := s.sp.UniqueLeft && a.Elem.Side == oRight && s.decides()
	matched := false
	for i := range s.buf {
		x := &s.buf[i]
		if !s.sp.pairOf(a.Elem, x.a.Elem) {
			continue
		}
		// Retract: the first partner of an element reported unmatched
		// retracts that record before the pair.
		if s.sp.Emit == oRetracting && x.reported && !x.matched {
			s.out.Records = append(s.out.Records, singleRecord(oRetractRec, x.a.Elem))
		}
		x.matched = true
		matched = true
		s.out.Records = append(s.out.Records, pairRecord(a.Elem, x.a.Elem))
	}
	s.forgetting = false // the key holds data again
	b := oBuffered{a: a, matched: matched}
	if s.sp.outer(a.Elem.Side) && !matched && s.sp.Emit != oFinal {
		s.out.Records = append(s.out.Records, singleRecord(oUnmatchedRec, a.Elem))
		b.reported = true
	}
	if decided {
		// join.UniqueLeft: its fate is known now, and it leaves at once
		// (reported unmatched now under Final too).
		s.leave(b, false)
		return
	}
	s.buf = append(s.buf, b)
}

// decides says whether, under join.UniqueLeft, the key's buffer decides
// the fate of a right element arriving: it holds one left element, so no
// other can come.
func (s *oSim) decides() bool {
	n := 0
	for _, x := range s.buf {
		if x.a.Elem.Side == oLeft {
			n++
		}
	}
	return n == 1
}

// oldest returns the indexes in buf of the elements the cap evicts next:
// the oldest by timestamp, the left one first on equal times
// (join.MaxBufferedPerKey). Equal times on one side are not ordered by
// the contract, so all of them are returned.
func (s *oSim) oldest() []int {
	best := -1
	for i, x := range s.buf {
		if best < 0 || x.a.Elem.Time < s.buf[best].a.Elem.Time ||
			(x.a.Elem.Time == s.buf[best].a.Elem.Time && x.a.Elem.Side < s.buf[best].a.Elem.Side) {
			best = i
		}
	}
	var out []int
	for i, x := range s.buf {
		if x.a.Elem.Time == s.buf[best].a.Elem.Time && x.a.Elem.Side == s.buf[best].a.Elem.Side {
			out = append(out, i)
		}
	}
	return out
}

func (s *oSim) evict(i int) {
	x := s.buf[i]
	s.buf = slices.Delete(s.buf, i, i+1)
	s.leave(x, true)
}

// maxOutcomes bounds how many ways of breaking eviction ties the oracle
// follows for one key.
const maxOutcomes = 64

// outcomes plays one key's arrivals (in arrival order) to the end of the
// stream and returns every outcome the contract allows: one, unless the
// size cap has to choose among elements with equal times.
func (sp oSpec) outcomes(arr []oArrival, late map[int]bool) []oOutcome {
	var done []*oSim
	var play func(s *oSim, next int)
	play = func(s *oSim, next int) {
		for {
			for sp.MaxBuffered > 0 && len(s.buf) > sp.MaxBuffered {
				c := s.oldest()
				for _, i := range c[1:] {
					if len(done) < maxOutcomes {
						t := s.clone()
						t.evict(i)
						play(t, next)
					}
				}
				s.evict(c[0])
			}
			if next == len(arr) {
				s.cleanUp(1 << 62) // the watermark reaches infinity
				done = append(done, s)
				return
			}
			s.arrive(arr[next], late[arr[next].Index])
			next++
		}
	}
	play(&oSim{sp: sp, progress: noWatermark, fired: noWatermark, out: oOutcome{Fates: map[int]oFate{}}}, 0)
	out := make([]oOutcome, len(done))
	for i, s := range done {
		out[i] = s.out
	}
	return out
}

// allPairs is the brute-force pair set of §2.1 over the given elements:
// every left and right element with the same key within the bounds.
func (sp oSpec) allPairs(elems []oElem) []string {
	var out []string
	for _, a := range elems {
		for _, b := range elems {
			if a.Side == oLeft && sp.pairOf(a, b) {
				out = append(out, pairRecord(a, b).String())
			}
		}
	}
	slices.Sort(out)
	return out
}

// describe writes the options as join options, e.g.
// "Between(3000ms, 5000ms), LowerExclusive, FullOuter, EmitRetract".
func (sp oSpec) describe() string {
	parts := []string{fmt.Sprintf("Between(%dms, %dms)", sp.Lower, sp.Upper)}
	if sp.LowerExcl {
		parts = append(parts, "LowerExclusive")
	}
	if sp.UpperExcl {
		parts = append(parts, "UpperExclusive")
	}
	parts = append(parts, sp.Type.String(), sp.Emit.String())
	if sp.Lateness != 0 {
		parts = append(parts, fmt.Sprintf("AllowedLateness(%dms)", sp.Lateness))
	}
	if sp.MaxBuffered != 0 {
		parts = append(parts, fmt.Sprintf("MaxBufferedPerKey(%d)", sp.MaxBuffered))
	}
	if sp.CleanupEvery != 0 {
		parts = append(parts, fmt.Sprintf("CleanupEvery(%dms)", sp.CleanupEvery))
	}
	return strings.Join(parts, ", ")
}
