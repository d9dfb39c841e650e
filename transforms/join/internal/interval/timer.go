package interval

// This file holds the interval join's timer policy: where a key's one
// cleanup timer goes (timerFor: CleanupEvery less a millisecond after the
// earliest expiry, and the output watermark hold), how it is moved without
// tripping Prism's watermark-hold bugs (moveTimer and the tag, package
// timertag), and which firings are stale (firing: the tag says which time
// a timer is for). Beam Go on Prism allows one timer family per DoFn, so
// cleanup, final emission and forgetting a key all share it.

import (
	"context"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

// recordTag is the tag of a cleanup timer whose firing appends a cleanup
// record instead of reading the key's state (see timer.record).
const recordTag = "~"

// timer is where the cleanup timer of a buffer must be: the firing time and
// the output watermark hold.
type timer struct {
	fire, hold int64
	set        bool
	// record: every buffered element expires by fire, the timer holds
	// nothing and the join emits nothing when elements expire
	// (joiner.AppendCleanup), so its firing needs no state read: it
	// appends a cleanup record to the bag (bagstate.AppendCleanup), and
	// whoever reads the bag next applies it (joiner.replay). The timer is
	// tagged recordTag, and the key's forgetting timer, which reads, is
	// set beside it: it is where the timer moves once the record is
	// applied.
	record bool
}

// armed is one runner timer of a key: its tag, firing time and output
// timestamp.
type armed struct {
	tag        string
	fire, hold int64
}

// armedOf is the runner timers that stand for t: none if t is not set, its
// own, and the forgetting timer beside a record timer.
func (j *joiner) armedOf(t timer) []armed {
	if !t.set {
		return nil
	}
	hold := t.hold
	if hold == timertag.NoHold {
		hold = t.fire
	}
	a := []armed{{tag: t.tag(), fire: t.fire, hold: hold}}
	if t.record {
		g := j.forgetAt(t.fire)
		a = append(a, armed{tag: "", fire: g, hold: g})
	}
	return a
}

// without returns the timers of a but the one tagged tag: what is still set
// after that one fired.
func without(a []armed, tag string) []armed {
	return slices.DeleteFunc(slices.Clone(a), func(x armed) bool { return x.tag == tag })
}

// timerFor derives the timer from the key's state alone, so that a firing
// can recompute which time it is for: CleanupEvery less a millisecond
// after the earliest expiry (cleanupAt), holding the output watermark at the oldest outer element
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
		t := timer{fire: cleanupAt(next, j.CleanupEvery), hold: timertag.NoHold, set: true}
		if j.Rules.Emit != match.Immediate {
			for _, s := range []match.Side{match.Left, match.Right} {
				if has[s] && j.Rules.Type.Outer(s) && (t.hold == timertag.NoHold || oldest[s] < t.hold) {
					t.hold = oldest[s]
				}
			}
		}
		// A key that its firing would leave empty and forget at once
		// (ProgressHorizon(0)) is read and cleared by it: no record.
		t.record = j.AppendCleanup && !ks.hot && t.hold == timertag.NoHold && j.latestExpiry(ks) <= t.fire && j.forgetAt(t.fire) > t.fire
		return t
	}
	if p := ks.b.Progress; p != match.NoProgress && !ks.hot {
		// A hot key is forgotten by its split part (hotFn.spreadTimer).
		return timer{fire: j.forgetAt(p), hold: timertag.NoHold, set: true}
	}
	return timer{}
}

// forgetAt is when a key of the default layout that holds only its
// progress p is forgotten: the progress horizon (ProgressHorizon) after
// p, rounded up to CleanupEvery; with a horizon of zero, at p itself, in
// the firing that removed the key's last element (joiner.cleanup). It is
// a function of the key's state alone, so every worker forgets the key at
// the same event time. An element less than the horizon behind the
// watermark when the key is forgotten is later than p, so it is not late
// against p either, and the key holds nothing it could join: its verdict
// is the one it would get were the key never forgotten.
func (j *joiner) forgetAt(p int64) int64 {
	if j.Horizon == 0 {
		return p
	}
	return roundUp(p+j.Horizon, j.CleanupEvery)
}

// forgetTime is when a key of the split layout (spreader) under rules r
// that holds only its progress p is forgotten: one join memory (the span,
// the allowed lateness and a millisecond) and the progress horizon after
// p, rounded up to every (CleanupEvery). The join memory is the split
// layout's: its buckets may lag the key's first stage, which must not
// forget the key before they have cleaned up what it sent them.
func forgetTime(r match.Rules, p, horizon, every int64) int64 {
	lo, hi := r.Bounds.Millis()
	memory := max(hi, 0) + max(-lo, 0) + r.Lateness.Milliseconds() + 1
	return roundUp(p+memory+horizon, every)
}

// latestExpiry is the latest expiry among the elements in ks.b.
func (j *joiner) latestExpiry(ks *keyState) int64 {
	latest := int64(-1 << 63)
	for _, s := range []match.Side{match.Left, match.Right} {
		if t, ok := ks.b.Newest(s); ok {
			latest = max(latest, j.Rules.Expiry(s, t))
		}
	}
	return latest
}

// moveTimer moves the cleanup timer from where it was (before) to where it
// must be (after). A timer that need not hold the output watermark holds it
// at its own firing time, Beam's default, which never holds it back. The
// timer's tag says what it is for, so that a firing can be checked against
// the key's state (firing), and a change of hold, which is a change of
// tag, clears the old timer and sets a new one: see package timertag.
func (j *joiner) moveTimer(st stores, before, after timer) {
	if after == before {
		return
	}
	j.moveArmed(st, j.armedOf(before), after)
}

// moveArmed moves the key's runner timers from those set (before) to those
// that stand for after: it clears each tag after does not use and sets each
// timer that is not already set as after needs it.
func (j *joiner) moveArmed(st stores, before []armed, after timer) {
	setArmed(st.cleanup, st.tp, before, j.armedOf(after))
}

// setArmed moves a timer family's runner timers from those set (before)
// to those wanted: it clears each tag want does not use and sets each
// timer of want that is not already set.
func setArmed(family *timers.EventTime, tp timers.Provider, before, want []armed) {
	for _, b := range before {
		if !slices.ContainsFunc(want, func(a armed) bool { return a.tag == b.tag }) {
			family.ClearTag(tp, b.tag)
		}
	}
	for _, a := range want {
		if !slices.Contains(before, a) {
			timertag.Arm(family, tp, a.tag, a.fire, a.hold)
		}
	}
}

// tag is the timer's tag: recordTag for a record timer, "" for another that
// holds nothing, else "hold/fire" in milliseconds.
func (t timer) tag() string {
	if t.record {
		return recordTag
	}
	return timertag.Tag(t.hold, t.fire)
}

// cleanupAt is when a key whose earliest expiry is next is cleaned up:
// every-1 milliseconds later, so that one firing removes everything that
// expires within every of the earliest (next itself when every is one
// millisecond). It depends on the earliest expiry only, so an arrival can
// move a key's timer earlier but never later: a firing is never for a time
// later than the runner has reached.
func cleanupAt(next, every int64) int64 {
	return next + max(every, 1) - 1
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

// firedOf reads which time a firing is for from its tag and output
// timestamp (timertag.Read); a record timer's firing time is its output
// timestamp, as for a timer that holds nothing.
func firedOf(tc timers.Context, et beam.EventTime) timertag.Fired {
	if tc.Tag == recordTag {
		return timertag.Fired{Tag: tc.Tag, At: et.Milliseconds(), OK: true}
	}
	return timertag.Read(tc, et)
}

// firing checks a firing of the key's cleanup timer against the timer its
// state implies (ks.timer), and returns the timer to clean up for and the
// runner timers still set besides the one that fired (pending), to move
// from.
//
// A firing is stale, and ok is false, when the state implies no timer (the
// key's state was cleared after the timer was set) or a later one than the
// firing is for: the key was cleaned up since (a firing delivered twice),
// or its timer moved later. Cleaning up at the time the state implies would
// then remove elements before the watermark has reached their expiry and
// record a progress it has not reached, so that partners still on time
// would be judged late. A stale firing is counted (stale_firings), the
// timer is set again, in case the runner took the firing for it, and
// nothing is cleaned. A firing for a later time than the state implies is
// not stale (the watermark has passed the state's time too): the cleanup
// is at the state's time; unless it is the Go SDK's inline firing of a
// tag cleared in the bundle (f.Cleared), which says nothing of the
// watermark and is stale too. A firing whose tag this join did not write
// (ok false in f) is taken for the state's timer.
func (j *joiner) firing(ctx context.Context, st stores, ks *keyState, f timertag.Fired) (t timer, pending []armed, ok bool) {
	t = ks.timer
	if f.Stale(t.set, t.fire) {
		counters.StaleFirings.Inc(ctx, 1)
		j.moveTimer(st, timer{}, t)
		return timer{}, nil, false
	}
	return t, without(j.armedOf(t), f.Tag), true
}
