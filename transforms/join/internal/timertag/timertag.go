// Package timertag is how beamjoin's engines use their one event-time
// timer family: Beam Go on Prism hangs with two families in a DoFn, so a
// key's timers are told apart by tags. A timer that holds the output
// watermark is tagged with its hold and its firing time ("hold/fire", in
// milliseconds), one that holds nothing with "" (its output timestamp is
// its firing time), so that a firing says which time it is for and can be
// checked against the key's state. Prism v2.77 miscounts watermark holds
// when a timer is replaced by one with the same firing time and another
// hold (the stale firing passes its check and drops the old hold twice),
// so a change of hold, which is a change of tag, clears the old timer and
// sets a new one under the new tag instead; timers.WithNoOutputTimestamp
// has a similar counting bug, hence the firing-time hold.
//
// It rests on the Beam Go SDK's timers alone. docs/design/interval.md
// ("Timers") gives the policy it serves.
package timertag

import (
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
)

// NoHold marks a timer that holds no output watermark.
const NoHold = int64(-1 << 63)

// Timer is where a key's one timer must be: its firing time and output
// watermark hold (NoHold: none), in milliseconds; Set is false for no
// timer.
type Timer struct {
	Fire, Hold int64
	Set        bool
}

// Tag is the timer's tag: "" for a timer that holds nothing, else
// "hold/fire".
func (t Timer) Tag() string { return Tag(t.Hold, t.Fire) }

// Tag is the tag of a timer that fires at fire and holds the output
// watermark at hold: "" if hold is NoHold, else "hold/fire".
func Tag(hold, fire int64) string {
	if hold == NoHold {
		return ""
	}
	return strconv.FormatInt(hold, 10) + "/" + strconv.FormatInt(fire, 10)
}

// Arm sets a family's timer tagged tag to fire at fire and hold the
// output watermark at hold, but no later than fire (milliseconds). A
// timer whose hold is later than its firing time (an outer element whose
// final record is due after the key's next cleanup, which fires first)
// is refused by Beam Java's SDK and is no part of Beam's model; holding at
// the firing time instead is as good, because the firing sets the key's
// next timer, whose hold, clamped again, is never later than the element:
// the output watermark passes the element only once its record is out.
// The tag keeps naming the hold the state implies, so that a firing is
// judged against the state as before (Read).
func Arm(family *timers.EventTime, tp timers.Provider, tag string, fire, hold int64) {
	family.Set(tp, time.UnixMilli(fire), timers.WithOutputTimestamp(time.UnixMilli(min(hold, fire))), timers.WithTag(tag))
}

// Move moves a family's one timer of a key from before to after. armed
// says whether before is still set (it is not once it has fired): an armed
// timer that after does not keep, or keeps under another tag, is cleared;
// after, if set, is armed unless it is before, still armed. A timer that
// holds nothing is armed with its hold at its firing time.
func Move(family *timers.EventTime, tp timers.Provider, before, after Timer, armed bool) {
	if armed && before == after {
		return
	}
	if armed && (!after.Set || before.Tag() != after.Tag()) {
		family.ClearTag(tp, before.Tag())
	}
	if after.Set {
		hold := after.Hold
		if hold == NoHold {
			hold = after.Fire
		}
		Arm(family, tp, after.Tag(), after.Fire, hold)
	}
}

// Fired is a firing of a timer as the runner delivers it: its tag and the
// time it was set for.
type Fired struct {
	Tag string
	At  int64 // the time the timer was set for
	OK  bool  // At is known: the tag is one Tag writes
	// Cleared: the firing is the Go SDK's inline firing of a tag cleared
	// earlier in the bundle, not the runner's. Before each timer the
	// runner delivers, the SDK fires every change made to the key's
	// timers in the bundle that sorts at or before it; a clear sorts first
	// and fires with event time 0 (exec.ParDo.ProcessTimers, v2.77; the
	// harness's model_sdk_test.go), whatever time its tag was set for, so
	// it says nothing of where the watermark is. It shows as an event time
	// other than the output timestamp Arm gave the tag (its hold, or its
	// firing time if earlier); a timer whose output timestamp is 0 cannot
	// be told apart, and is taken for the runner's.
	Cleared bool
}

// Stale reports whether the firing cannot be the runner's firing of the
// key's timer as its state implies it (set, to fire at fire): no timer is
// set, the firing is for an earlier time (delivered twice, or the key
// moved on since), or it is a tag cleared in the bundle that the Go SDK
// fired inline (Cleared). A firing for a later time than fire is not
// stale: the watermark has passed that time, so fire too. A stale firing
// cleans nothing; every engine sets its timer again.
func (f Fired) Stale(set bool, fire int64) bool {
	return !set || (f.OK && f.At < fire) || f.Cleared
}

// Read reads which time a firing is for from its tag, or, for a timer
// tagged "", from its output timestamp et, which is its firing time.
func Read(tc timers.Context, et beam.EventTime) Fired {
	if tc.Tag == "" {
		return Fired{Tag: tc.Tag, At: et.Milliseconds(), OK: true}
	}
	f := Fired{Tag: tc.Tag}
	if hold, at, found := strings.Cut(tc.Tag, "/"); found {
		t, err := strconv.ParseInt(at, 10, 64)
		f.At, f.OK = t, err == nil
		if h, err := strconv.ParseInt(hold, 10, 64); err == nil && f.OK {
			f.Cleared = et.Milliseconds() != min(h, t) // Arm's output timestamp
		}
	}
	return f
}
