package asof

// This file holds the as-of join's rules in plain Go, with no Beam in
// them: which version a left element joins (Rules.match, with the tie
// rule in supersedes), what one key keeps (keyState) and how a timer
// firing finalizes left elements and drops versions no on-time element
// can need (keyState.fire), and where the key's one timer goes
// (Rules.timer). The streaming DoFn (fn.go) and the bounded sweep
// (bounded.go) only move data between Beam and these functions.

import (
	"bytes"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
	"math"
	"slices"
)

// noProgress is the progress of a key on which no timer has fired.
const noProgress = math.MinInt64

// Rules are the as-of join's options in the core's terms.
type Rules struct {
	// Outer: a left element with no valid version gives an unmatched
	// record (LeftOuter); else it gives nothing (Inner).
	Outer bool
	// Strict: a version must be strictly before the left element.
	Strict bool
	// MaxAge in milliseconds: a version must be at most this old (t -
	// MaxAge <= its time, inclusive). Negative: no limit.
	MaxAge int64
	// Retract: EmitRetract, records at once and retractions; else
	// EmitFinal, records once final.
	Retract bool
	// Horizon in milliseconds (ProgressHorizon): how long a key that holds
	// no version and no pending left element keeps its progress before it
	// is forgotten (its state cleared).
	Horizon int64
}

// entry is an element of either side as the core keeps it: its event
// time in milliseconds and its encoded value.
type entry struct {
	Time  int64
	Value []byte
}

// supersedes is the as-of join's order of versions: a takes precedence
// over b if it is later, or, at the same time, if its encoded value is
// greater (bytes.Compare). It depends on the versions alone, never on the
// order they arrive in.
func supersedes(a, b entry) bool {
	if a.Time != b.Time {
		return a.Time > b.Time
	}
	return bytes.Compare(a.Value, b.Value) > 0
}

// valid reports whether version v may be joined with a left element at t:
// v is at or before t (strictly before under Strict) and, under MaxAge, at
// most MaxAge older than t.
func (r Rules) valid(v entry, t int64) bool {
	if v.Time > t || (r.Strict && v.Time == t) {
		return false
	}
	return r.MaxAge < 0 || v.Time >= t-r.MaxAge
}

// match is the match rule: the version among vs that a left element at t
// joins, the one valid at t that supersedes all others valid at t.
func (r Rules) match(vs []entry, t int64) (entry, bool) {
	var best entry
	found := false
	for _, v := range vs {
		if r.valid(v, t) && (!found || supersedes(v, best)) {
			best, found = v, true
		}
	}
	return best, found
}

// keyState is what one key keeps: its progress (a timer for that time has
// fired, so elements before it are late), its versions, at most one per
// time and sorted by time, and its left elements that are not final yet.
//
// Versions holds at most one version before Progress, the latest (the
// base): an on-time left element is at or after Progress, so no older
// version can be its match. Every version at or after Progress is kept.
type keyState struct {
	Progress int64
	Versions []entry
	Pending  []entry
}

func newKeyState() *keyState { return &keyState{Progress: noProgress} }

// late is the lateness rule: an element is late iff it is before the
// key's progress. A left element before it may already have lost the
// versions it needed, and a version before it may be the match of a left
// element whose record is final.
func (k *keyState) late(t int64) bool { return t < k.Progress }

// change is a pending left element whose match a new version changed
// (EmitRetract): its earlier record (Old, or unmatched if !HadOld) is to
// be retracted and New's pair emitted.
type change struct {
	Left   entry
	Old    entry
	HadOld bool
	New    entry
}

// addVersion adds the on-time version v. It returns whether v is kept (a
// version at the same time that supersedes v drops it) and, under
// EmitRetract, the pending left elements whose match v becomes.
func (k *keyState) addVersion(r Rules, v entry) (kept bool, changes []change) {
	i, found := slices.BinarySearchFunc(k.Versions, v.Time, func(e entry, t int64) int {
		switch {
		case e.Time < t:
			return -1
		case e.Time > t:
			return 1
		}
		return 0
	})
	if found && !supersedes(v, k.Versions[i]) {
		return false, nil
	}
	if r.Retract {
		for _, l := range k.Pending {
			if !r.valid(v, l.Time) {
				continue
			}
			old, had := r.match(k.Versions, l.Time)
			if !had || supersedes(v, old) {
				changes = append(changes, change{Left: l, Old: old, HadOld: had, New: v})
			}
		}
	}
	if found {
		k.Versions[i] = v
	} else {
		k.Versions = slices.Insert(k.Versions, i, v)
	}
	return true, changes
}

// finalLeft is a left element made final, with its match if it has one.
type finalLeft struct {
	Left    entry
	Version entry
	Matched bool
}

// fire is the key's timer firing at at: the watermark has reached at, so
// every left element before it is final (returned with its match, in
// event-time order), the progress moves to at, and versions no on-time
// left element can join are dropped: all before the latest version before
// at, and that one too if under MaxAge it is too old for any time from at
// on. It returns how many versions it dropped.
func (k *keyState) fire(r Rules, at int64) (final []finalLeft, dropped int) {
	keep := k.Pending[:0]
	for _, l := range k.Pending {
		if l.Time < at {
			v, ok := r.match(k.Versions, l.Time)
			final = append(final, finalLeft{Left: l, Version: v, Matched: ok})
		} else {
			keep = append(keep, l)
		}
	}
	k.Pending = keep
	slices.SortFunc(final, func(a, b finalLeft) int { return compareEntries(a.Left, b.Left) })
	k.Progress = max(k.Progress, at)
	base := -1 // the latest version before at
	for i, v := range k.Versions {
		if v.Time < at {
			base = i
		}
	}
	if base >= 0 && r.MaxAge >= 0 && at-k.Versions[base].Time > r.MaxAge {
		base++ // too old for every left element from at on
	}
	if base > 0 {
		dropped = base
		k.Versions = slices.Delete(k.Versions, 0, base)
	}
	return final, dropped
}

// compareEntries orders entries by time, then encoded value.
func compareEntries(a, b entry) int {
	if a.Time != b.Time {
		if a.Time < b.Time {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.Value, b.Value)
}

// forgettable reports whether the key holds nothing but its progress: no
// version and no pending left element. Such a key is forgotten Horizon
// after its progress (see Rules.timer).
func (k *keyState) forgettable() bool {
	return len(k.Versions) == 0 && len(k.Pending) == 0 && k.Progress != noProgress
}

// forgetAt is when a forgettable key's state is cleared: Horizon after its
// progress.
func (r Rules) forgetAt(k *keyState) int64 { return satAdd(k.Progress, r.Horizon) }

// timer is where the key's one timer must be, derived from its state
// alone: at the earliest of a millisecond after its earliest pending left
// element (which is then final), a millisecond after its second version
// (the first is then no longer needed) and, under MaxAge, a millisecond
// after its first version is too old for any later left element. While
// left elements are pending it holds the output watermark at the earliest
// of them, so that their records, whenever made, are on time. A key that
// holds only its progress has its timer at forgetAt, holding nothing.
func (r Rules) timer(k *keyState) timertag.Timer {
	t := timertag.Timer{Hold: timertag.NoHold}
	if k.forgettable() {
		t.Fire, t.Set = r.forgetAt(k), true
		return t
	}
	at := func(fire int64) {
		if !t.Set || fire < t.Fire {
			t.Fire, t.Set = fire, true
		}
	}
	for _, l := range k.Pending {
		at(l.Time + 1)
		if t.Hold == timertag.NoHold || l.Time < t.Hold {
			t.Hold = l.Time
		}
	}
	if len(k.Versions) >= 2 {
		at(k.Versions[1].Time + 1)
	}
	if len(k.Versions) >= 1 && r.MaxAge >= 0 {
		at(satAdd(k.Versions[0].Time, r.MaxAge+1))
	}
	return t
}

// satAdd is a + b for b >= 0, saturating at the largest int64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
