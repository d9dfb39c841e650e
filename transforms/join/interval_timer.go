package join

// This file holds the interval join's timer policy: where a key's one
// cleanup timer goes (timerFor: the earliest expiry rounded up to
// CleanupEvery, and the output watermark hold), how it is moved without
// tripping Prism's watermark-hold bugs (moveTimer and the tag), and which
// firings are stale (firing). Beam Go on Prism allows one timer family per
// DoFn, so cleanup, final emission and forgetting a key all share it.

import (
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// noHold marks a timer that holds no output watermark.
const noHold = int64(-1 << 63)

// timer is where the cleanup timer of a buffer must be: the firing time and
// the output watermark hold.
type timer struct {
	fire, hold int64
	set        bool
}

// timerFor derives the timer from the key's state alone, so that a firing
// can recompute which time it is for: the earliest expiry rounded up to
// CleanupEvery, holding the output watermark at the oldest outer element
// when EmitFinal or EmitRetract may still emit it; or, for a key holding
// only progress, the time its progress is forgotten.
func (j *joiner) timerFor(ks *keyState) timer {
	var oldest [2]int64
	var has [2]bool
	next, ok := int64(0), false
	for _, s := range []match.Side{match.Left, match.Right} {
		oldest[s], has[s] = ks.oldest(s)
		if t := j.Rules.Expiry(s, oldest[s]); has[s] && (!ok || t < next) {
			next, ok = t, true
		}
	}
	if ok {
		t := timer{fire: roundUp(next, j.CleanupEvery), hold: noHold, set: true}
		if j.Rules.Emit != match.Immediate {
			for _, s := range []match.Side{match.Left, match.Right} {
				if has[s] && j.Rules.Type.Outer(s) && (t.hold == noHold || oldest[s] < t.hold) {
					t.hold = oldest[s]
				}
			}
		}
		return t
	}
	if p := ks.b.Progress; p != match.NoProgress {
		lo, hi := j.Rules.Bounds.Millis()
		memory := max(hi, 0) + max(-lo, 0) + j.Rules.Lateness.Milliseconds() + 1
		return timer{fire: roundUp(p+memory, j.CleanupEvery), hold: noHold, set: true}
	}
	return timer{}
}

// moveTimer moves the cleanup timer from where it was (before) to where it
// must be (after). A timer that need not hold the output watermark holds it
// at its own firing time, Beam's default, which never holds it back.
//
// The timer's tag is its hold. Prism v2.77 miscounts watermark holds when a
// timer is replaced by one with the same firing time and another hold (the
// stale firing passes its check and drops the old hold twice), so a change
// of hold clears the old timer and sets a new one under a new tag instead.
// (timers.WithNoOutputTimestamp has a similar counting bug, hence the
// firing-time hold.)
func (j *joiner) moveTimer(st stores, before, after timer) {
	if after == before {
		return
	}
	if before.set && before.tag() != after.tag() {
		st.cleanup.ClearTag(st.tp, before.tag())
	}
	if !after.set {
		return
	}
	hold := after.hold
	if hold == noHold {
		hold = after.fire
	}
	st.cleanup.Set(st.tp, time.UnixMilli(after.fire), timers.WithOutputTimestamp(time.UnixMilli(hold)), timers.WithTag(after.tag()))
}

func (t timer) tag() string {
	if t.hold == noHold {
		return ""
	}
	return strconv.FormatInt(t.hold, 10)
}

// roundUp rounds t up to a multiple of every.
func roundUp(t, every int64) int64 {
	if every <= 1 {
		return t
	}
	r := t % every
	switch {
	case r > 0:
		return t - r + every
	case r < 0:
		return t - r
	}
	return t
}

// firing returns the timer that fired for the key in ks, recomputed from
// its state, or false for a stale firing: one whose key's state was cleared
// after the timer was set, so that nothing is left to clean.
func firing(ks *keyState) (timer, bool) {
	return ks.timer, ks.timer.set
}
