// This file holds the replay reader: a splittable DoFn that reads a file in
// line order and advances the watermark as it goes, so that a downstream
// join sees event time move during the run, as it would on a stream.

package jsonl

import (
	"context"
	"fmt"
	"io"
	"math"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Span)(nil)).Elem())
	register.DoFn6x2[context.Context, *lagEstimator, *sdf.LockRTracker, string,
		func(beam.EventTime, string, Record), func(DeadLetter),
		sdf.ProcessContinuation, error](&replayFn{})
}

// Span is the restriction of a replay: the bytes [Start, End) of a file,
// whose first line is line number Line.
type Span struct {
	Start, End int64
	Line       int64
}

// noTime is the largest time read before any record: none.
const noTime = math.MinInt64

// ReplayStep is how far the largest time read must rise before a replay
// reports the new watermark. Reporting is a checkpoint, a bundle round trip
// (about 10 ms on Prism); one second is also the interval join's default
// cleanup granularity, so finer reports would fire no more timers.
const ReplayStep = time.Second

// replayFn replays a file in line order. Its watermark estimator holds the
// largest event time read so far; the watermark is that time less the lag.
// After each line that raises that time by ReplayStep or more since the
// last report it checkpoints, so the runner learns of the new watermark
// before the next line is read: that is what lets downstream timers fire,
// and later lines be late, during the run.
type replayFn struct {
	P         parser
	LagMillis int64
}

func (f *replayFn) Setup() { f.P.setup() }

func (f *replayFn) CreateInitialRestriction(ctx context.Context, file string) (Span, error) {
	r, err := f.P.open(ctx, file, 0)
	if err != nil {
		return Span{}, err
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return Span{}, fmt.Errorf("beamjoin: %s: %w", file, err)
	}
	return Span{Start: 0, End: n, Line: 1}, nil
}

// SplitRestriction keeps a file whole: its lines are replayed in order.
func (f *replayFn) SplitRestriction(_ string, rest Span) []Span { return []Span{rest} }

func (f *replayFn) RestrictionSize(_ string, rest Span) float64 {
	return float64(rest.End - rest.Start)
}

func (f *replayFn) CreateTracker(rest Span) *sdf.LockRTracker {
	return sdf.NewLockRTracker(&spanTracker{rest: rest, next: rest.Start, line: rest.Line})
}

func (f *replayFn) InitialWatermarkEstimatorState(_ beam.EventTime, _ Span, _ string) int64 {
	return noTime
}

func (f *replayFn) CreateWatermarkEstimator(maxTime int64) *lagEstimator {
	return &lagEstimator{MaxTime: maxTime, Lag: f.LagMillis}
}

func (f *replayFn) WatermarkEstimatorState(e *lagEstimator) int64 { return e.MaxTime }

func (f *replayFn) ProcessElement(ctx context.Context, we *lagEstimator, rt *sdf.LockRTracker, file string, emit func(beam.EventTime, string, Record), dead func(DeadLetter)) (sdf.ProcessContinuation, error) {
	rest := rt.GetRestriction().(Span)
	r, err := f.P.open(ctx, file, rest.Start)
	if err != nil {
		return sdf.StopProcessing(), err
	}
	defer r.Close()
	lr := newLineReader(r, f.P.MaxLineBytes, rest.Line, rest.Start)
	reported := we.MaxTime
	for {
		start := lr.offset
		l, err := lr.next()
		if err == io.EOF || (err == nil && start >= rest.End) {
			rt.TryClaim(spanPos{Start: rest.End})
			return sdf.StopProcessing(), rt.GetError()
		}
		if err != nil {
			return sdf.StopProcessing(), fmt.Errorf("beamjoin: %s:%d: %w", file, lr.number+1, err)
		}
		if !rt.TryClaim(spanPos{Start: start, Next: l.Next, Line: l.Number}) {
			return sdf.StopProcessing(), rt.GetError()
		}
		ts, ok := f.P.handle(ctx, file, l, emit, dead)
		if ok && we.observe(ts) && (reported == noTime || we.MaxTime-reported >= ReplayStep.Milliseconds()) {
			return sdf.ResumeProcessingIn(0), nil
		}
	}
}

// lagEstimator is the replay's watermark estimator.
type lagEstimator struct {
	MaxTime int64 // largest event time read, or noTime
	Lag     int64 // milliseconds
}

// observe records a time read and reports whether the watermark rose.
func (e *lagEstimator) observe(ts int64) bool {
	if ts <= e.MaxTime {
		return false
	}
	e.MaxTime = ts
	return true
}

// CurrentWatermark is the largest time read less the lag.
func (e *lagEstimator) CurrentWatermark() time.Time {
	wm := int64(mtime.MinTimestamp)
	if e.MaxTime != noTime && e.MaxTime-e.Lag > wm {
		wm = e.MaxTime - e.Lag
	}
	return mtime.Time(wm).ToTime()
}

// spanPos is a line claimed by the replay: it starts at byte Start, the
// next one at Next, and its number is Line. Claiming Start >= End claims
// the end of the span.
type spanPos struct {
	Start, Next, Line int64
}

// spanTracker tracks a replay's progress through a Span. It splits only to
// checkpoint (fraction 0): a file is replayed by one reader, in order.
type spanTracker struct {
	rest       Span
	next, line int64 // start and number of the next line
	done       bool
	err        error
}

func (t *spanTracker) TryClaim(p any) bool {
	if t.done || t.err != nil {
		return false
	}
	pos := p.(spanPos)
	if pos.Start >= t.rest.End {
		t.done = true
		return false
	}
	if pos.Start != t.next {
		t.err = fmt.Errorf("beamjoin: replay claimed byte %d, want %d", pos.Start, t.next)
		return false
	}
	t.next, t.line = pos.Next, pos.Line+1
	return true
}

func (t *spanTracker) GetError() error { return t.err }

func (t *spanTracker) TrySplit(fraction float64) (primary, residual any, err error) {
	if fraction > 0 || t.done || t.err != nil {
		return t.rest, nil, nil
	}
	res := Span{Start: t.next, End: t.rest.End, Line: t.line}
	t.rest.End = t.next
	t.done = true
	if res.Start >= res.End {
		return t.rest, nil, nil
	}
	return t.rest, res, nil
}

func (t *spanTracker) GetProgress() (done, remaining float64) {
	return float64(t.next - t.rest.Start), float64(t.rest.End - t.next)
}

func (t *spanTracker) IsDone() bool { return t.done || t.next >= t.rest.End }

func (t *spanTracker) GetRestriction() any { return t.rest }

func (t *spanTracker) IsBounded() bool { return true }
