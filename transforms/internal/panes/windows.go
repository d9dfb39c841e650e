package panes

// This file holds the windows: how an element is assigned to them, as
// Beam's WindowInto does, and how session windows merge.

import (
	"cmp"
	"fmt"
	"slices"
)

// Beam's bounds of event time, in milliseconds (mtime.MinTimestamp,
// mtime.EndOfGlobalWindowTime); package join checks that they agree.
const (
	MinTime     = int64(-9223372036854775)
	EndOfGlobal = int64(9223372036854775) - 24*60*60*1000
)

// Kind is a kind of windowing.
type Kind uint8

// The kinds of windowing the Beam Go SDK has.
const (
	Global Kind = iota
	Fixed
	Sliding
	Sessions
)

// Windowing is a window function: its kind and lengths, in milliseconds.
type Windowing struct {
	Kind Kind
	// Size is the length of fixed and sliding windows, Period how often
	// sliding windows start, Gap the gap that ends a session.
	Size, Period, Gap int64
}

// Merging reports whether windows merge (sessions).
func (wf Windowing) Merging() bool { return wf.Kind == Sessions }

// Length is the longest a window can be before merging: the size, the gap,
// or zero for the global window.
func (wf Windowing) Length() int64 {
	switch wf.Kind {
	case Fixed, Sliding:
		return wf.Size
	case Sessions:
		return wf.Gap
	}
	return 0
}

// Window is a window [Start, End), in milliseconds.
type Window struct{ Start, End int64 }

// GlobalWindow is Beam's global window.
var GlobalWindow = Window{Start: MinTime, End: EndOfGlobal + 1}

// MaxTimestamp is the window's last millisecond, the timestamp of its
// records.
func (w Window) MaxTimestamp() int64 { return w.End - 1 }

func (w Window) String() string { return fmt.Sprintf("[%d,%d)", w.Start, w.End) }

// Assign returns the windows of an element at time ts in order of their
// ends, as Beam's WindowInto assigns them (the formulas are the Go SDK's,
// exec.assignWindows, so the two cannot disagree). A session element's
// window is its proto-session [ts, ts+gap), which merges with overlapping
// and touching ones (see merge).
func (wf Windowing) Assign(ts int64) []Window {
	switch wf.Kind {
	case Fixed:
		start := ts - (ts+wf.Size)%wf.Size
		return []Window{{Start: start, End: min(start+wf.Size, EndOfGlobal+1)}}
	case Sliding:
		var ws []Window
		last := ts - ts%wf.Period
		for start := last; start > ts-wf.Size; start -= wf.Period {
			ws = append(ws, Window{Start: start, End: start + wf.Size})
		}
		slices.Reverse(ws)
		return ws
	case Sessions:
		return []Window{{Start: ts, End: ts + wf.Gap}}
	}
	return []Window{GlobalWindow}
}

// merge merges overlapping windows, as Beam merges sessions: two windows
// merge iff they intersect or touch (one ends where the other starts), as
// Prism's GroupByKey merges them. It returns the merged windows in order, and
// for each input window the index of the one it is in.
func merge(ws []Window) (merged []Window, into []int) {
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case ws[a].Start != ws[b].Start:
			return cmp.Compare(ws[a].Start, ws[b].Start)
		default:
			return cmp.Compare(ws[a].End, ws[b].End)
		}
	})
	into = make([]int, len(ws))
	for _, i := range order {
		w := ws[i]
		if n := len(merged); n > 0 && w.Start <= merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, w.End)
		} else {
			merged = append(merged, w)
		}
		into[i] = len(merged) - 1
	}
	return merged, into
}
