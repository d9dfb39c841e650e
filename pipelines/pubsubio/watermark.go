// This file holds Read's watermark: bounded out-of-orderness while messages
// come, and event time following the clock while the subscription is idle.

package pubsubio

import (
	"math"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
)

// noTime is the largest event time read before any message: none.
const noTime = math.MinInt64

// clock is the state of Read's watermark estimator, kept by the runner
// across checkpoints. Times are milliseconds since the Unix epoch.
type clock struct {
	// MaxTime is the largest event time read, or math.MinInt64 before the
	// first message.
	MaxTime int64
	// ReadAt is the wall-clock time at which the last message was read.
	ReadAt int64
	// Watermark is the watermark reported last; it never goes back.
	Watermark int64
}

// newClock is the state before anything was read.
func newClock() clock {
	return clock{MaxTime: noTime, Watermark: int64(mtime.MinTimestamp)}
}

// clockEstimator is Read's watermark estimator. While messages come, the
// watermark is the largest event time read less the lag. Once no message
// has come for the idle time, the watermark is that largest time plus the
// time since the last message, less the lag: event time is taken to pass
// as fast as the clock. That follows the stream's own clock, so it is right
// for a live stream (event time close to now) and for a replay of old data
// paced in event time alike; a watermark of "now less the lag" would make
// every message of an old replay late after its first pause. Before the
// first message the watermark does not move: there is no time to start
// from.
type clockEstimator struct {
	clock
	Lag       int64 // milliseconds
	IdleAfter int64 // milliseconds
}

// CurrentWatermark is the watermark reported to the runner.
func (e *clockEstimator) CurrentWatermark() time.Time {
	return mtime.Time(e.Watermark).ToTime()
}

// read records a message of event time ts read at wall-clock time now.
func (e *clockEstimator) read(ts, now int64) {
	e.ReadAt = now
	if ts > e.MaxTime {
		e.MaxTime = ts
	}
	e.advance(e.MaxTime - e.Lag)
}

// idle records that a pull at wall-clock time now found no message.
func (e *clockEstimator) idle(now int64) {
	if e.MaxTime == noTime || now-e.ReadAt < e.IdleAfter {
		return
	}
	e.advance(e.MaxTime + (now - e.ReadAt) - e.Lag)
}

// advance raises the watermark to wm, within Beam's time range.
func (e *clockEstimator) advance(wm int64) {
	wm = min(max(wm, int64(mtime.MinTimestamp)), int64(mtime.MaxTimestamp))
	if wm > e.Watermark {
		e.Watermark = wm
	}
}
