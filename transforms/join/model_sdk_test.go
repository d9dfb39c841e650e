package join

// This file emulates the Go SDK's own handling of a stateful DoFn's
// timers within a bundle (v2.77, go/pkg/beam/core/runtime/exec), for the
// runner-model harness's work-item schedules: one bundle holding a
// runner key's elements and then its due timers, as Dataflow builds its
// work items. It follows the SDK's code step by step; the line numbers
// are those of v2.77.
//
//   - A timer set or cleared in the bundle is not written to the runner
//     at once: timerProvider.Set (timers.go:173) records it in the key's
//     modifications (timerModifications.InsertTimer, timers.go:312), the
//     last change per tag in modified and every change in a heap
//     (earlierTimers); FlushAndReset (timers.go:124), from
//     ParDo.FinishBundle (pardo.go:257), writes each tag's last change.
//   - ParDo.ProcessTimers (pardo.go:402) fires, before each timer the
//     runner sends, every change in the heap that sorts at or before it
//     (HeadSetIter, timers.go:287; pardo.go:428) and is still its tag's
//     last change (IsModified, timers.go:320; pardo.go:435), inline,
//     marking its tag cleared (pardo.go:443).
//   - Cleared timers sort first (sortableTimer.Less, timers.go:229), and a
//     clear is a TimerMap with Clear set and both timestamps zero
//     (EventTime.ClearTag, core/timers/timers.go; Cleared, timers.go:212):
//     so a tag cleared in the bundle fires inline before the runner's
//     timer, with its tag and an event time (its hold) of 0.
//   - The runner's timer itself fires only if its tag was not changed in
//     the bundle (pardo.go:458); the runner has consumed it either way.
//
// Domains and panes play no part: the join's timers are all event-time
// timers of one family, and a bundle's panes are alike.

import (
	"cmp"
	"maps"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/join/internal/statetest"
)

// sdkTimers is one runner key's timer modifications in a bundle, as
// exec.timerModifications keeps them.
type sdkTimers struct {
	modified map[string]timers.TimerMap // by tag: its last change
	heap     []timers.TimerMap          // every change, in sdkLess order
}

// Set records a change, as timerProvider.Set and InsertTimer do. A timer
// whose hold is after its firing time panics, as statetest.Timers.Set does.
func (s *sdkTimers) Set(t timers.TimerMap) {
	if !t.Clear {
		if err := statetest.CheckHold(t); err != nil {
			panic(err)
		}
	}
	s.modified[t.Tag] = t
	i, _ := slices.BinarySearchFunc(s.heap, t, sdkCompare)
	s.heap = slices.Insert(s.heap, i, t)
}

// sdkCompare orders timers as sortableTimer.Less does (one domain):
// cleared first, then by firing time, hold and tag.
func sdkCompare(a, b timers.TimerMap) int {
	if a.Clear != b.Clear {
		if a.Clear {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.FireTimestamp, b.FireTimestamp), cmp.Compare(a.HoldTimestamp, b.HoldTimestamp), cmp.Compare(a.Tag, b.Tag))
}

// isModified is timerModifications.IsModified: t's tag was changed in the
// bundle, and its last change is not t.
func (s *sdkTimers) isModified(t timers.TimerMap) bool {
	got, ok := s.modified[t.Tag]
	return ok && got != t
}

// cleared is sortableTimer.Cleared: t as a clear of its tag.
func cleared(t timers.TimerMap) timers.TimerMap {
	t.Clear, t.FireTimestamp, t.HoldTimestamp = true, 0, 0
	return t
}

// BeginSDKBundle starts a bundle in which ks's timer changes go through
// the SDK's handling, until EndSDKBundle.
func (ks *ModelKeyState) BeginSDKBundle() {
	ks.sdk = &sdkTimers{modified: map[string]timers.TimerMap{}}
}

// EndSDKBundle writes the bundle's timer changes to the runner's timers,
// each tag's last change, as FlushAndReset does at the end of the bundle.
func (ks *ModelKeyState) EndSDKBundle() {
	for _, tag := range slices.Sorted(maps.Keys(ks.sdk.modified)) {
		ks.tm.Set(ks.sdk.modified[tag])
	}
	ks.sdk = nil
}

// SDKTimers lists the timers ks will hold once the bundle's changes are
// written (EndSDKBundle), earliest firing first: what the DoFn has set.
func (ks *ModelKeyState) SDKTimers() []ModelTimer {
	c := &ModelKeyState{tm: ks.tm.Clone()}
	if ks.sdk != nil {
		for tag, t := range ks.sdk.modified {
			if t.Clear {
				delete(c.tm, tag)
			} else {
				c.tm[tag] = t
			}
		}
	}
	return c.Timers()
}

// SDKFiring is a firing the SDK made: the timer it gave OnTimer, and
// whether it fired it inline (a change made in the bundle) rather than as
// the runner sent it.
type SDKFiring struct {
	Timer  ModelTimer
	Inline bool
}

// Cleared reports whether the SDK fired a timer the bundle had cleared:
// its tag with both timestamps zero, no evidence of the watermark.
func (f SDKFiring) Cleared() bool { return f.Timer.set.Clear }

// FireSDK delivers runner timer t of a runner key in an SDK bundle
// (BeginSDKBundle), as ParDo.ProcessTimers handles it: the runner has
// consumed t; the bundle's changes that sort at or before it and are
// still their tag's last change fire first, inline (a cleared one with
// its hold, the event time, 0), each then marked cleared; t fires after
// them unless its tag was changed in the bundle. It returns what the
// firings emitted and which timers fired, in order.
func (in *ModelInstance) FireSDK(ks *ModelKeyState, key string, t ModelTimer) (_ []Result[string, string, string], fired []SDKFiring, err error) {
	defer holdRefused(&err)
	in.records, in.late = nil, nil
	if ks.tm[t.Tag] == t.set {
		delete(ks.tm, t.Tag)
	}
	s := ks.sdk
	runner := t.set
	for len(s.heap) > 0 && sdkCompare(s.heap[0], runner) <= 0 {
		x := s.heap[0]
		s.heap = s.heap[1:]
		if s.isModified(x) {
			continue
		}
		s.modified[x.Tag] = cleared(x)
		fired = append(fired, SDKFiring{Timer: modelTimer(x), Inline: true})
		if err := in.onTimer(ks, key, x); err != nil {
			return in.records, fired, err
		}
	}
	if !s.isModified(runner) {
		fired = append(fired, SDKFiring{Timer: t})
		if err := in.onTimer(ks, key, runner); err != nil {
			return in.records, fired, err
		}
	}
	return in.records, fired, nil
}

// modelTimer is t as a ModelTimer.
func modelTimer(t timers.TimerMap) ModelTimer {
	return ModelTimer{Tag: t.Tag, Fire: t.FireTimestamp.Milliseconds(), Hold: t.HoldTimestamp.Milliseconds(), set: t}
}
