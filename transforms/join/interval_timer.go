package join

// This file holds the interval join's timer policy: where a key's one
// cleanup timer goes (timerFor: the latest expiry within CleanupEvery of
// the earliest, and the output watermark hold), how it is moved without
// tripping Prism's watermark-hold bugs (moveTimer and the tag), which
// firings are stale (firingFor), and what the firings tell of the
// watermark (floor). Beam Go on Prism allows one timer family per
// DoFn, so cleanup, final emission and forgetting a key all share it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"google.golang.org/grpc/metadata"
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
// can recompute which time it is for: the latest expiry within
// CleanupEvery of the earliest (cleanupTime), holding the output watermark
// at the oldest outer element when EmitFinal or EmitRetract may still emit
// it; or, for a key holding only progress, the time its progress is
// forgotten, rounded up to CleanupEvery.
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
		t := timer{fire: j.cleanupTime(ks, next), hold: noHold, set: true}
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
		return timer{fire: roundUp(p+j.memory(), j.CleanupEvery), hold: noHold, set: true}
	}
	return timer{}
}

// cleanupTime is when a key whose earliest expiry is next is cleaned up:
// at the latest expiry within CleanupEvery of it (next itself when
// CleanupEvery is one millisecond), so that one firing clears every
// element that expires in that span and none waits longer than
// CleanupEvery past its expiry. A bucketed key's unread buckets count by
// their oldest elements.
func (j *joiner) cleanupTime(ks *keyState, next int64) int64 {
	upTo := next + max(j.CleanupEvery, 1) - 1
	fire, _ := ks.b.LastExpiry(j.Rules, upTo)
	fire = max(fire, next)
	for _, bk := range ks.buckets {
		for _, s := range []match.Side{match.Left, match.Right} {
			if t := j.Rules.Expiry(s, bk.Oldest[s]); bk.Count[s] > 0 && t <= upTo {
				fire = max(fire, t)
			}
		}
	}
	return fire
}

// moveTimer moves the cleanup timer from where it was (before) to where it
// must be (after). A timer that need not hold the output watermark holds it
// at its own firing time, Beam's default, which never holds it back.
//
// The timer's tag says what it is for: its firing time and its hold (see
// tag). OnTimer gets no firing time from Beam (its beam.EventTime is the
// hold), so the tag is how a firing says which time it is for. Every move
// therefore changes the tag: the old timer is cleared and a new one set.
// That is also what Prism v2.77 needs: it miscounts watermark holds when a
// timer is replaced by one with the same firing time and another hold (the
// stale firing passes its check and drops the old hold twice), so a timer
// must never be re-set under its own tag with another hold. (Timer writes
// go out with the bundle's output; they are not state round trips.)
// timers.WithNoOutputTimestamp has a similar counting bug, hence the
// firing-time hold.
func (j *joiner) moveTimer(st stores, before, after timer) {
	if after == before {
		return
	}
	if before.set {
		st.cleanup.ClearTag(st.tp, before.tag())
	}
	if !after.set {
		return
	}
	st.cleanup.Set(st.tp, time.UnixMilli(after.fire), timers.WithOutputTimestamp(time.UnixMilli(after.holdAt())), timers.WithTag(after.tag()))
}

// holdAt is the time at which the timer holds the output watermark: its
// hold, or its own firing time when it need not hold it.
func (t timer) holdAt() int64 {
	if t.hold == noHold {
		return t.fire
	}
	return t.hold
}

// tag writes the timer as its tag: the firing time in milliseconds, then,
// if it holds the output watermark, "/" and the hold ("61000/42000").
func (t timer) tag() string {
	if t.hold == noHold {
		return strconv.FormatInt(t.fire, 10)
	}
	return strconv.FormatInt(t.fire, 10) + "/" + strconv.FormatInt(t.hold, 10)
}

// parseTag reads a timer from its tag, or reports false for a tag this
// version did not write.
func parseTag(tag string) (timer, bool) {
	fire, hold, held := strings.Cut(tag, "/")
	t := timer{hold: noHold, set: true}
	var err error
	if t.fire, err = strconv.ParseInt(fire, 10, 64); err != nil {
		return timer{}, false
	}
	if held {
		if t.hold, err = strconv.ParseInt(hold, 10, 64); err != nil || t.hold == noHold {
			return timer{}, false
		}
	}
	return t, true
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

// firingFor judges a firing of the key's timer, the timer written in its
// tag, against due, the timer the key's state implies (timerFor). It
// returns the time up to which the key may be cleaned, and false for a
// stale firing, one for a timer that has since moved later: then the key's
// cleanup is not due, and the caller sets due's timer again (the runner may
// have taken the stale firing for it) and does nothing else.
//
// A firing proves the input watermark has passed its own time, so when the
// state's due time is not after the firing (the timer fired as set, or the
// state's timer was due earlier still and its firing never came), the key
// is cleaned up to the firing's time. A key without state (cleared after
// the timer was set) has nothing to clean: stale. A tag this version did
// not write is taken at the state's word, as before tags said their time.
func firingFor(tag string, due timer) (int64, bool) {
	if !due.set {
		return 0, false
	}
	fired, ok := parseTag(tag)
	if !ok {
		return due.fire, true
	}
	if due.fire > fired.fire {
		return 0, false
	}
	return fired.fire, true
}

// What the join knows of the watermark. A DoFn cannot read its input
// watermark; an event-time timer that fires at time T is the only evidence
// of it. On runners that fire a timer only once the stage's input
// watermark has passed it (Flink, Dataflow), T is a sound lower bound of
// the watermark for every key. Prism v2.77 is weaker: it fires a stateful
// stage's timers against its upstream watermark, holding back only the
// same key's earlier elements, so an element of another key that was
// already waiting at the stage, on time, can be processed after a firing
// later than its own timestamp, even in the same bundle. So:
//
//   - A firing's time is published when its bundle ends (finishBundle), and
//     a bundle judges its elements against what was published before its
//     first element (floor): never against a firing of its own.
//   - The join claims only the published time less one join memory
//     (max(upper,0) + max(-lower,0) + allowed lateness + 1 ms), the time a
//     key keeps its progress after its data is gone. That is exactly what
//     a key that forgot its progress knew (its forgetting firing is at its
//     progress plus the memory), so forgetting never turns a late element
//     into a new one; and an element of a key with no progress is late when
//     it is more than a join memory behind a published firing. On Prism
//     this is wrong only if the watermark moves more than a join memory
//     past an on-time element while it waits for its key's bundle in
//     progress.
//
// The published bound is kept per process, for each interval join and
// each worker: keyed by the join's ID (made when the transform is built and
// serialized with the DoFn) and the SDK worker's ID (from the gRPC metadata
// the Beam harness puts in the bundle context). Per process rather than
// per DoFn instance because a runner may run a stage's bundles on several
// instances (Prism does, in one process), and a firing seen by one tells
// every other the same fact; per worker because a process may run several
// jobs, or the same pipeline again (package prismrun does, after a Prism
// failure), and one job's watermark says nothing of another's. Without a
// worker ID in the context the bound is the instance's own. A new worker
// (a restart, a key moved to another process) starts with no bound until
// its first published firing: until then only a key's own progress can
// make an element late.
var watermarks sync.Map // watermarkID -> *atomic.Int64

type watermarkID struct{ join, worker string }

// published returns the join's published watermark lower bound in this
// process (match.NoProgress before any), found the first time from ctx.
func (j *joiner) published(ctx context.Context) *atomic.Int64 {
	if j.known != nil {
		return j.known
	}
	worker := ""
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		if ids := md.Get("worker_id"); len(ids) == 1 {
			worker = ids[0]
		}
	}
	fresh := new(atomic.Int64)
	fresh.Store(match.NoProgress)
	if worker == "" || j.ID == "" {
		j.known = fresh
		return fresh
	}
	v, _ := watermarks.LoadOrStore(watermarkID{j.ID, worker}, fresh)
	j.known = v.(*atomic.Int64)
	return j.known
}

// floor is the progress every key of the join has certainly reached, as
// far as this bundle knows: the bound published before its first element,
// less one join memory; match.NoProgress if nothing was published.
func (j *joiner) floor(ctx context.Context) int64 {
	if !j.snapped {
		j.bound, j.snapped = j.published(ctx).Load(), true
	}
	if j.bound == match.NoProgress {
		return match.NoProgress
	}
	return j.bound - j.memory()
}

// memory is how long a key keeps its progress after its data is gone.
func (j *joiner) memory() int64 {
	lo, hi := j.Rules.Bounds.Millis()
	return max(hi, 0) + max(-lo, 0) + j.Rules.Lateness.Milliseconds() + 1
}

// startBundle and finishBundle bracket a bundle: the bundle cache is
// dropped, and the latest firing seen in the bundle is published at its end.
func (j *joiner) startBundle() {
	j.forget()
	j.snapped, j.fired = false, match.NoProgress
}

func (j *joiner) finishBundle() {
	j.forget()
	if j.fired == match.NoProgress || j.known == nil {
		return
	}
	for w := j.known; ; {
		old := w.Load()
		if j.fired <= old || w.CompareAndSwap(old, j.fired) {
			return
		}
	}
}

// newJoinID returns a join's ID for the watermark registry: random, so
// that two joins, or two pipelines, never share one.
func newJoinID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("beamjoin: no randomness for a join ID: %v", err))
	}
	return hex.EncodeToString(b[:])
}
