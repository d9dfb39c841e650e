// This file holds a reader's watermark: bounded out-of-orderness from the
// event times read, held back by messages handed back for redelivery, and
// following the clock on a quiet subscription only when IdleAfter asks.

package pubsubio

import (
	"math"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
)

// noTime is the largest event time read before any message: none.
const noTime = math.MinInt64

// redeliveryWait is how long a reader waits for a message it handed back to
// be read again before its watermark stops waiting for it: long enough for
// the longest backoff a subscription's retry policy allows (600 s), so
// that only a message that never comes back (taken by a dead-letter
// policy, or read by a worker that this one hears nothing from) releases
// the watermark this way.
const redeliveryWait = 10 * time.Minute

// clock is the state of a reader's watermark estimator, kept by the runner
// with its cursor across checkpoints. Times are milliseconds since the Unix
// epoch.
type clock struct {
	// MaxTime is the largest event time read by the read's readers, as far
	// as this one knows, or math.MinInt64 before the first message.
	MaxTime int64
	// ReadAt is the wall-clock time at which the read last read a message,
	// as far as this reader knows.
	ReadAt int64
	// Watermark is the watermark reported last; it never goes back.
	Watermark int64
	// Awaited are the messages a failed run of this reader's bundle pulled
	// and handed back, while they are awaited: the watermark stays at or
	// before the earliest of their event times.
	Awaited []awaited
}

// awaited is a message handed back for redelivery, until a reader of the
// read in this worker reads it again or redeliveryWait passes.
type awaited struct {
	ID    string // message ID
	Time  int64  // event time
	Since int64  // wall-clock time it was handed back
}

// newClock is the state before anything was read.
func newClock() clock {
	return clock{MaxTime: noTime, Watermark: int64(mtime.MinTimestamp)}
}

// clockEstimator is a reader's watermark estimator. The watermark is the
// largest event time read less the lag (bounded out-of-orderness), and
// never after a message that is awaited. With IdleAfter, once no message
// has come for that long, event time is taken to pass as fast as the clock
// from the largest time read: that follows the stream's own clock, right
// for a live stream and for a replay of old data paced in event time alike,
// where "now less the lag" would make every message of an old replay late
// after its first pause. Before the first message the watermark does not
// move: there is no time to start from.
type clockEstimator struct {
	clock
	Lag       int64 // milliseconds
	IdleAfter int64 // milliseconds; zero: never by the clock
}

// CurrentWatermark is the watermark reported to the runner.
func (e *clockEstimator) CurrentWatermark() time.Time {
	return mtime.Time(e.Watermark).ToTime()
}

// read records a message of event time ts read at wall-clock time now.
func (e *clockEstimator) read(ts, now int64) {
	e.ReadAt = max(e.ReadAt, now)
	e.MaxTime = max(e.MaxTime, ts)
	e.update(now)
}

// learn takes in what the other readers of the read in this worker know:
// the largest event time they read, and when they last read a message.
func (e *clockEstimator) learn(maxTime, readAt int64) {
	e.MaxTime = max(e.MaxTime, maxTime)
	e.ReadAt = max(e.ReadAt, readAt)
}

// await adds messages handed back for redelivery, keeping the earlier
// entry of a message already awaited.
func (e *clockEstimator) await(ms []awaited) {
	for _, m := range ms {
		known := false
		for _, a := range e.Awaited {
			known = known || a.ID == m.ID
		}
		if !known {
			e.Awaited = append(e.Awaited, m)
		}
	}
}

// update moves the watermark as far as what is known at wall-clock time
// now allows.
func (e *clockEstimator) update(now int64) {
	if e.MaxTime == noTime {
		return
	}
	wm := e.MaxTime - e.Lag
	if e.IdleAfter > 0 && now-e.ReadAt >= e.IdleAfter {
		wm += now - e.ReadAt
	}
	for _, a := range e.Awaited {
		wm = min(wm, a.Time)
	}
	e.advance(wm)
}

// advance raises the watermark to wm, within Beam's time range.
func (e *clockEstimator) advance(wm int64) {
	wm = min(max(wm, int64(mtime.MinTimestamp)), int64(mtime.MaxTimestamp))
	if wm > e.Watermark {
		e.Watermark = wm
	}
}
