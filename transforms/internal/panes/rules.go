package panes

// This file holds the rules: when a window fires and expires, which
// arrivals are late, and what a firing does to a key's state.

import (
	"cmp"
	"math"
	"slices"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// NoTime marks an unset time: no firing yet (State.Progress), no window
// missed (Entry.From), no pane yet (Entry.Through), no next firing
// (Firing.Next).
const NoTime = int64(math.MinInt64)

// reported is Entry.Through for a session entry that has been in a pane:
// an entry is in one session at a time, however sessions merge.
const reported = int64(math.MaxInt64)

// Rules are a window join's or cogroup's windowing and allowed lateness.
type Rules struct {
	Windowing Windowing
	// Lateness is how long, in milliseconds, a window keeps its values
	// after it fired, for late arrivals to join in late panes.
	Lateness int64
}

// FireAt is when window w fires: once event time reaches its end, so
// that an element at its max timestamp is still on time (Beam's
// AfterWatermark, the default trigger). The global window fires when the
// input ends.
func (r Rules) FireAt(w Window) int64 { return min(w.End, EndOfGlobal) }

// ExpireAt is when window w expires: once event time passes its max
// timestamp plus the allowed lateness, when Beam's GroupByKey would drop
// its late data. Every window expires when the input ends.
func (r Rules) ExpireAt(w Window) int64 { return min(w.MaxTimestamp()+r.Lateness+1, EndOfGlobal) }

// Expired is the lateness rule: window w has expired by event time t
// (NoTime: nothing is known of event time). An element arriving when the
// key knows event time has reached t is late for every window w with
// Expired(w, t); it is not joined in w, and goes to the late output.
func (r Rules) Expired(w Window, t int64) bool { return t != NoTime && r.ExpireAt(w) <= t }

// ForgetAt is when a key that holds nothing but its progress p forgets
// it: one window length plus the allowed lateness later. After that, an
// arrival on the key is judged only by what the DoFn instance has seen.
func (r Rules) ForgetAt(p int64) int64 {
	return min(p+max(r.Windowing.Length(), 1)+r.Lateness, EndOfGlobal)
}

// Entry is an element a key holds: its side, event time and encoded
// value, and what has become of it.
type Entry struct {
	Side  match.Side
	Time  int64
	Value []byte
	// From, when set, excludes the windows that end before it: the ones
	// the element came too late for.
	From int64
	// Through, when set, is the end of the last window the entry has been
	// in a pane of (for sessions, reported once it has): in later panes of
	// such a window it is an old value.
	Through int64
	// Judged says the entry has been judged against the key's progress
	// (Rules.Fire), not only against what the instance had seen.
	Judged bool
	// Matched says the entry has been in a pane that had values of both
	// sides: for a window join, in at least one pair.
	Matched bool
}

// windows returns the windows e is in, in order of their ends.
func (r Rules) windows(e Entry) []Window {
	ws := r.Windowing.Assign(e.Time)
	for len(ws) > 0 && ws[0].End < e.From {
		ws = ws[1:]
	}
	return ws
}

// Arrive applies the lateness rule to an entry that arrived when event
// time was known to have reached progress (NoTime if nothing is known):
// it returns the windows e is too late for, excludes them from e, and
// reports whether e is still in any window. An entry in no window is late.
func (r Rules) Arrive(e *Entry, progress int64) (missed []Window, in bool) {
	for _, w := range r.windows(*e) {
		// Windows expire in the order of their ends, so the missed ones
		// come first.
		if !r.Expired(w, progress) {
			if len(missed) > 0 {
				e.From = w.End
			}
			return missed, true
		}
		missed = append(missed, w)
	}
	return missed, false
}

// FirstFiring is when the first window of an arrived entry fires: the
// time of the timer its arrival sets.
func (r Rules) FirstFiring(e Entry) int64 { return r.FireAt(r.windows(e)[0]) }

// State is what a key holds: the time of the latest firing its state
// records (NoTime if none) and its entries.
type State struct {
	Progress int64
	Entries  []Entry
}

// Pane is one firing of one window of a key: every entry in the window,
// and which of them are new in it (in no earlier pane of the window).
type Pane struct {
	Window  Window
	Entries []Entry
	New     []bool
}

// Missed is an entry and a window it came too late for.
type Missed struct {
	Entry  Entry
	Window Window
}

// Firing is what a timer firing did to a key.
type Firing struct {
	Panes  []Pane
	Missed []Missed
	// Late are entries too late for every window, Done entries whose
	// windows have all expired: both have left the state.
	Late, Done []Entry
	// Write says the state changed and must be written back.
	Write bool
	// Next is when the key must fire next (NoTime: never).
	Next int64
	// Forget says the key holds nothing but progress, for long enough:
	// its state is to be cleared.
	Forget bool
}

// Fire is a timer firing at time at on a key whose state is st. It judges
// the entries that arrived since the key's last write against its
// progress, emits a pane for each window that is due and has new entries,
// expires the windows whose time is up, and removes the entries whose
// every window has expired. st is updated in place.
//
// A firing that changes nothing (Write false) need not be written back:
// its entries are judged again, against the same progress, next time.
func (r Rules) Fire(st *State, at int64) Firing {
	f := Firing{Next: NoTime}
	progress := st.Progress
	kept := st.Entries[:0]
	for _, e := range st.Entries {
		if !e.Judged {
			e.Judged = true
			missed, in := r.Arrive(&e, progress)
			for _, w := range missed {
				f.Missed = append(f.Missed, Missed{Entry: e, Window: w})
				f.Write = true
			}
			if !in {
				f.Late = append(f.Late, e)
				continue
			}
		}
		kept = append(kept, e)
	}
	st.Entries = kept

	// Event time has reached the firing's time, and the key's progress.
	now := max(at, progress)
	windows, members := r.group(kept)
	for i, w := range windows {
		if r.FireAt(w) > now {
			continue
		}
		p := Pane{Window: w}
		var sides [2]bool
		anyNew := false
		for _, m := range members[i] {
			isNew := kept[m].Through < w.End
			anyNew = anyNew || isNew
			sides[kept[m].Side] = true
			p.New = append(p.New, isNew)
		}
		if !anyNew {
			continue
		}
		for j, m := range members[i] {
			e := &kept[m]
			if sides[match.Left] && sides[match.Right] {
				e.Matched = true
			}
			if p.New[j] {
				e.Through = w.End
				if r.Windowing.Merging() {
					e.Through = reported
				}
			}
			p.Entries = append(p.Entries, *e)
		}
		f.Panes = append(f.Panes, p)
		f.Write = true
	}

	// An entry leaves when its last window expires; the next firing is the
	// earliest firing or expiry of a window that remains. Windows are in
	// order of their ends, so an entry's last window is the last it is in.
	last := make([]Window, len(kept))
	for i, w := range windows {
		for _, m := range members[i] {
			last[m] = w
		}
		if r.Expired(w, now) {
			continue
		}
		next := r.FireAt(w)
		if next <= now {
			next = r.ExpireAt(w)
		}
		if f.Next == NoTime || next < f.Next {
			f.Next = next
		}
	}
	remaining := kept[:0]
	for i, e := range kept {
		if r.Expired(last[i], now) {
			f.Done = append(f.Done, e)
			f.Write = true
			continue
		}
		remaining = append(remaining, e)
	}
	st.Entries = remaining

	if f.Write {
		st.Progress = now
	}
	if len(st.Entries) == 0 && st.Progress != NoTime {
		if forget := r.ForgetAt(st.Progress); forget <= now {
			f.Forget = true
		} else {
			f.Next = forget
		}
	}
	return f
}

// group returns the windows the entries are in, in order of their ends,
// and for each window the indexes of its entries, in entry order. Session
// windows are merged across all entries, of both sides.
func (r Rules) group(entries []Entry) (windows []Window, members [][]int) {
	if r.Windowing.Merging() {
		protos := make([]Window, len(entries))
		for i, e := range entries {
			protos[i] = r.windows(e)[0]
		}
		windows, into := merge(protos)
		members = make([][]int, len(windows))
		for i, w := range into {
			members[w] = append(members[w], i)
		}
		return windows, members
	}
	index := map[Window]int{}
	for i, e := range entries {
		for _, w := range r.windows(e) {
			j, ok := index[w]
			if !ok {
				j = len(windows)
				index[w] = j
				windows = append(windows, w)
				members = append(members, nil)
			}
			members[j] = append(members[j], i)
		}
	}
	order := make([]int, len(windows))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(windows[a].End, windows[b].End) })
	sortedWindows := make([]Window, len(windows))
	sortedMembers := make([][]int, len(windows))
	for i, j := range order {
		sortedWindows[i], sortedMembers[i] = windows[j], members[j]
	}
	return sortedWindows, sortedMembers
}

// NewEntry is an arriving element: in every window of its time, in no
// pane yet, not yet judged.
func NewEntry(side match.Side, time int64, value []byte) Entry {
	return Entry{Side: side, Time: time, Value: value, From: NoTime, Through: NoTime}
}
