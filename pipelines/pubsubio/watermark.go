// This file holds a reader's watermark: bounded out-of-orderness from the
// event times its committed bundles read, held back by messages handed
// back for redelivery, guarded against event times far ahead of the
// stream, and moving on a quiet subscription only by the time the reader
// spent in pulls that found nothing, when IdleAfter asks. The rule is
// stated in docs/pubsub.md ("Watermark").

package pubsubio

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"

	"github.com/beamjoin/beamjoin/pipelines/internal/skew"
)

// noTime is the largest event time read before any message: none.
const noTime = math.MinInt64

// redeliveryWait is how long a reader waits for a message it handed back to
// be read again before its watermark stops waiting for it, counted in the
// reader's own bundle time: long enough for the longest backoff a
// subscription's retry policy allows (600 s), so that only a message that
// never comes back here (taken by a dead-letter policy, or read by a
// reader in another worker) releases the watermark this way.
const redeliveryWait = 10 * time.Minute

// nowMillis is the wall clock, in epoch milliseconds. A reader reads it
// only to measure its own pulls and bundles, and a silent reader its first
// pull (see clock.Base).
var nowMillis = func() int64 { return time.Now().UnixMilli() }

// clock is the state of a reader's watermark estimator, kept by the runner
// with its cursor across checkpoints (encoded by state.go). Times are
// milliseconds since the Unix epoch, durations milliseconds.
type clock struct {
	// MaxTime is the largest event time the watermark took in: read by
	// this reader, or by a committed bundle of a reader of its worker; or
	// math.MinInt64 before the first.
	MaxTime int64
	// Watermark is the watermark reported last; it never goes back.
	Watermark int64
	// Quiet is the time the reader spent in pulls that came back empty
	// since it last read a message (or learned of a later time from its
	// worker): the only time IdleAfter counts. A pause of the reader's own
	// bundles (a restart, a restore, a runner slow to resume it) is not
	// in it.
	Quiet int64
	// Active is the time the reader spent in its own bundles: the clock
	// by which it stops waiting for a handed-back message.
	Active int64
	// Base is, for a reader of several that has read nothing, the wall
	// clock of its first empty pull less IdleAfter: the latest event time
	// it takes to have been read once it has been quiet for IdleAfter
	// (see clockEstimator). math.MinInt64 otherwise.
	Base int64
	// Skew is what the reader keeps of the messages that came ahead of
	// MaxTime by more than MaxSkew (package skew).
	Skew skew.State
	// Awaited are the messages a failed run of this reader's bundle pulled
	// and handed back, while they are awaited: the watermark stays at or
	// before the earliest of their event times.
	Awaited []awaited
}

// awaited is a message handed back for redelivery, until a committed
// bundle of a reader of the read in this worker reads it again, or the
// reader has spent redeliveryWait in its bundles since.
type awaited struct {
	ID    string // message ID
	Time  int64  // event time
	Since int64  // the reader's Active time when it was handed back
}

// newClock is the state before anything was read.
func newClock() clock {
	return clock{MaxTime: noTime, Watermark: int64(mtime.MinTimestamp), Base: noTime, Skew: skew.State{Earliest: skew.None}}
}

// copy returns c with its own Awaited.
func (c clock) copy() clock {
	c.Awaited = slices.Clone(c.Awaited)
	return c
}

// clockEstimator is a reader's watermark estimator. The watermark is the
// largest event time taken in less the lag (bounded out-of-orderness),
// and never after a message that is awaited. With IdleAfter, once the
// reader has spent that long in pulls that came back empty, event time is
// taken to pass as fast as that quiet time from the largest time taken
// in: that follows the stream's own clock, right for a live stream and
// for a replay of old data paced in event time alike. Before the first
// message the watermark does not move, except that a reader of several
// (Readers) with IdleAfter takes the wall clock of its first pull, less
// IdleAfter, as its largest time, so that a reader that never receives a
// message does not hold the read at the start of time.
//
// The SDK reads the watermark and the state from other goroutines (to
// answer the runner's progress and split requests) while ProcessElement
// changes them: every access holds mu.
type clockEstimator struct {
	mu sync.Mutex
	c  clock
	// mark is the wall clock up to which the bundle's time is in c.Active.
	mark int64

	lag, idleAfter, maxSkew int64 // milliseconds; zero: none
	silentBase              bool  // one reader of several, with IdleAfter
}

// CurrentWatermark is the watermark reported to the runner.
func (e *clockEstimator) CurrentWatermark() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return mtime.Time(e.c.Watermark).ToTime()
}

// state is a copy of the estimator's state, for the runner to keep.
func (e *clockEstimator) state() clock {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.c.copy()
}

// watermark is the watermark now.
func (e *clockEstimator) watermark() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.c.Watermark
}

// start brings the estimator up to what the read group g knows at the
// start of a bundle, whose own state is its predecessor's, committed: it
// shares its largest time, takes in the group's (a later time there
// means the subscription is not quiet), and settles the awaited messages
// that a committed bundle of the group read again, or that it has waited
// for long enough.
func (e *clockEstimator) start(g *readGroup) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mark = nowMillis()
	if known := g.share(e.c.MaxTime); known > e.c.MaxTime {
		e.c.MaxTime, e.c.Quiet = known, 0
	}
	kept := e.c.Awaited[:0]
	for _, a := range e.c.Awaited {
		givenUp := e.c.Active-a.Since >= redeliveryWait.Milliseconds()
		if !g.settle(a.ID, givenUp) && !givenUp {
			kept = append(kept, a)
		}
	}
	e.c.Awaited = kept
	if len(e.c.Awaited) == 0 {
		e.c.Awaited = nil
	}
	e.update()
}

// await adds messages handed back for redelivery, keeping the earlier
// entry of a message already awaited.
func (e *clockEstimator) await(ms []leased) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range ms {
		if !slices.ContainsFunc(e.c.Awaited, func(a awaited) bool { return a.ID == m.ID }) {
			e.c.Awaited = append(e.c.Awaited, awaited{ID: m.ID, Time: m.Time, Since: e.c.Active})
		}
	}
	e.update()
}

// take takes in the event time ts of a message the bundle read, unless it
// is too far ahead of the stream (MaxSkew), and reports whether it was.
func (e *clockEstimator) take(ts int64) (ahead bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	latest := e.c.MaxTime
	if latest != noTime && e.idle() {
		latest += e.c.Quiet
	}
	t, ahead := skew.Take(&e.c.Skew, latest, ts, e.maxSkew)
	if t != skew.None {
		e.c.MaxTime = max(e.c.MaxTime, t)
	}
	return ahead
}

// readAgain stops awaiting the messages ids, which the bundle read: the
// outputs that carry them and the state that no longer awaits them are
// committed together.
func (e *clockEstimator) readAgain(ids []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.c.Awaited) == 0 {
		return
	}
	e.c.Awaited = slices.DeleteFunc(e.c.Awaited, func(a awaited) bool { return slices.Contains(ids, a.ID) })
	if len(e.c.Awaited) == 0 {
		e.c.Awaited = nil
	}
}

// pulled records a pull that ran from wall-clock time began to ended and
// found n messages (good or not), then moves the watermark.
func (e *clockEstimator) pulled(began, ended int64, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.c.Active += max(ended-e.mark, 0)
	e.mark = max(e.mark, ended)
	if n > 0 {
		e.c.Quiet = 0
	} else {
		e.c.Quiet += max(ended-began, 0)
		if e.silentBase && e.c.MaxTime == noTime && e.c.Base == noTime {
			e.c.Base = began - e.idleAfter
		}
	}
	e.update()
}

// idle reports whether the reader has been quiet for IdleAfter.
func (e *clockEstimator) idle() bool { return e.idleAfter > 0 && e.c.Quiet >= e.idleAfter }

// update moves the watermark as far as the state allows.
func (e *clockEstimator) update() {
	base := e.c.MaxTime
	if base == noTime {
		if e.c.Base == noTime || !e.idle() {
			return
		}
		base = e.c.Base
	}
	wm := base - e.lag
	if e.idle() {
		wm += e.c.Quiet
	}
	for _, a := range e.c.Awaited {
		wm = min(wm, a.Time)
	}
	e.advance(wm)
}

// advance raises the watermark to wm, within Beam's time range.
func (e *clockEstimator) advance(wm int64) {
	wm = min(max(wm, int64(mtime.MinTimestamp)), int64(mtime.MaxTimestamp))
	if wm > e.c.Watermark {
		e.c.Watermark = wm
	}
}
