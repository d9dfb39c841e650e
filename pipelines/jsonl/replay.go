// This file holds the replay reader: one splittable DoFn that reads every
// file of every source in a fixed order, merged by event time, and reports
// one watermark as it goes, so that downstream joins see event time move
// during the run, as they would on a stream, the same way in every run.

package jsonl

import (
	"context"
	"fmt"
	"io"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamjoin/beamjoin/pipelines/internal/skew"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*cursor)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*replayClock)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sourcedRecord)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sourcedDeadLetter)(nil)).Elem())
	register.DoFn6x2[context.Context, *lagEstimator, *sdf.LockRTracker, []byte,
		func(beam.EventTime, sourcedRecord), func(sourcedDeadLetter),
		sdf.ProcessContinuation, error](&replayFn{})
	register.Emitter2[beam.EventTime, sourcedRecord]()
	register.Emitter1[sourcedDeadLetter]()
	register.DoFn3x0[beam.EventTime, sourcedRecord, func(beam.EventTime, string, Record)](&recordsOfFn{})
	register.DoFn2x0[sourcedDeadLetter, func(DeadLetter)](&deadLettersOfFn{})
}

// DefaultWatermarkStep is how far the largest time read must rise between
// two watermark reports of a replay when Source.WatermarkStep is zero.
const DefaultWatermarkStep = time.Second

// maxReports bounds how many watermark reports a replay makes: whatever
// the step, a report waits for 1/maxReports of the replay's bytes since the
// previous one. A report is a checkpoint, a bundle round trip for the
// reader and for every stage downstream (about 10 ms for the reader alone
// on Prism, tens of milliseconds with a join), so this bounds a replay's
// overhead whatever the span of event time it covers.
const maxReports = 500

// bundleBytes is the most a replay reads in one bundle: it checkpoints
// (reporting the watermark) after that many bytes even when neither the
// step nor the data say so, so that the records of a bundle, which the
// runner holds until the bundle ends, stay bounded.
const bundleBytes = 4 << 20

// noTime is the largest time read before any record: none.
const noTime = math.MinInt64

// replayFile is one file of a replay, and the index of its source.
type replayFile struct {
	Source int
	Name   string
}

// sourcedRecord and sourcedDeadLetter are the replay's outputs: a record or
// a dead letter, and the index of its source. recordsOfFn and
// deadLettersOfFn split them by source.
type sourcedRecord struct {
	Source int
	Key    string
	Record Record
	Late   bool // judged late by the replay (late.go)
}

type sourcedDeadLetter struct {
	Source     int
	DeadLetter DeadLetter
}

// replayFn replays the files of all its sources as one stream: each file
// in line order, the files merged by event time (see next), with one
// watermark, the largest event time taken in less the lag (a record far
// ahead of the stream is not taken in: MaxSkew, package skew). It reports the
// watermark by checkpointing (see report), so the runner learns of it
// before the next line is read: that is what lets downstream timers fire,
// and later lines be late, during the run. Which lines come between two
// reports depends only on the files and the settings.
//
// A DoFn instance keeps its files open between checkpoints, each read up to
// the next line to replay, and resumes from them when the runner gives it
// the residual of its own checkpoint: each byte of a file is read once,
// even on a file system that cannot seek (gs://).
type replayFn struct {
	Sources       []parser
	Files         []replayFile
	LagMillis     int64
	StepMillis    int64
	MaxSkewMillis int64 // zero: none

	open []*replayReader // by file; nil when not open
}

func (f *replayFn) Setup() {
	for i := range f.Sources {
		f.Sources[i].setup()
	}
	f.open = make([]*replayReader, len(f.Files))
}

func (f *replayFn) Teardown() {
	for i := range f.open {
		f.closeFile(i)
	}
}

// CreateInitialRestriction covers every file whole, as its file system
// sizes it.
func (f *replayFn) CreateInitialRestriction(ctx context.Context, _ []byte) (cursor, error) {
	c := cursor{Start: make([]int64, len(f.Files)), End: make([]int64, len(f.Files)), Line: make([]int64, len(f.Files))}
	var total int64
	for i, file := range f.Files {
		n, err := f.Sources[file.Source].size(ctx, file.Name)
		if err != nil {
			return cursor{}, err
		}
		c.End[i], c.Line[i] = n, 1
		total += n
	}
	c.ReportBytes = max(total/maxReports, 1)
	return c, nil
}

// SplitRestriction keeps the replay whole: it is one stream.
func (f *replayFn) SplitRestriction(_ []byte, c cursor) []cursor { return []cursor{c} }

func (f *replayFn) RestrictionSize(_ []byte, c cursor) float64 { return float64(c.remaining()) }

func (f *replayFn) CreateTracker(c cursor) *sdf.LockRTracker {
	return sdf.NewLockRTracker(newCursorTracker(c))
}

func (f *replayFn) InitialWatermarkEstimatorState(_ beam.EventTime, _ cursor, _ []byte) replayClock {
	return replayClock{MaxTime: noTime, Skew: skew.State{Earliest: skew.None}}
}

func (f *replayFn) CreateWatermarkEstimator(c replayClock) *lagEstimator {
	return newLagEstimator(c, f.LagMillis, f.MaxSkewMillis)
}

func (f *replayFn) WatermarkEstimatorState(e *lagEstimator) replayClock { return e.state() }

func (f *replayFn) ProcessElement(ctx context.Context, we *lagEstimator, rt *sdf.LockRTracker, _ []byte,
	emit func(beam.EventTime, sourcedRecord), dead func(sourcedDeadLetter)) (sdf.ProcessContinuation, error) {
	c := rt.GetRestriction().(cursor)
	if err := f.resume(ctx, c); err != nil {
		return sdf.StopProcessing(), err
	}
	reported := report{From: we.MaxTime(), Step: f.StepMillis, Bytes: c.ReportBytes}
	var read int64
	for {
		i := next(f.open, we.MaxTime(), f.MaxSkewMillis)
		if i < 0 {
			rt.TryClaim(claim{File: -1})
			return sdf.StopProcessing(), rt.GetError()
		}
		r := f.open[i]
		h := r.head
		if !rt.TryClaim(claim{File: i, Start: h.start, Next: h.l.Next, Line: h.l.Number}) {
			return sdf.StopProcessing(), rt.GetError()
		}
		p := &f.Sources[r.source]
		if rec, ok := p.emit(ctx, r.name, h, func(dl DeadLetter) { dead(sourcedDeadLetter{Source: r.source, DeadLetter: dl}) }); ok {
			late := p.judge(ctx, h.ts, we.MaxTime(), f.LagMillis)
			emit(mtime.Time(h.ts), sourcedRecord{Source: r.source, Key: h.key, Record: rec, Late: late})
			if we.take(h.ts) {
				p.skewed.Inc(ctx, 1)
			}
		}
		read += h.l.Next - h.start
		if err := f.advance(i); err != nil {
			return sdf.StopProcessing(), err
		}
		if next(f.open, we.MaxTime(), f.MaxSkewMillis) >= 0 && reported.due(read, we.MaxTime()) {
			return sdf.ResumeProcessingIn(0), nil
		}
	}
}

// next is the merge rule: the index of the file whose next line is
// replayed next, or -1 when every file is done. It is the file whose next
// line has the earliest event time, a line that is not a record counting
// as earlier than any (it goes as soon as it is next in its file); ties go
// to the earlier file, so to the earlier source, then the earlier name.
// With a skew bound (bound > 0 milliseconds), a record more than bound
// ahead of maxTime, the latest time taken in, while another file's next
// record is not, counts as earlier than any too: it is an outlier that
// the stream goes on without, and waiting for the stream to reach its
// time would hold the rest of its file back (see package skew). When
// every file's next record is that far ahead, the stream itself moved
// on, and the earliest goes first.
func next(files []*replayReader, maxTime, bound int64) int {
	ahead := func(r *replayReader) bool {
		return bound > 0 && maxTime != noTime && r.head.err == nil && r.head.ts > maxTime && r.head.ts-maxTime > bound
	}
	within := false
	for _, r := range files {
		if r != nil && !r.done && r.head.err == nil && !ahead(r) {
			within = true
			break
		}
	}
	best := -1
	var bestTime int64
	for i, r := range files {
		if r == nil || r.done {
			continue
		}
		t := r.head.ts
		if r.head.err != nil || (within && ahead(r)) {
			t = noTime
		}
		if best < 0 || t < bestTime {
			best, bestTime = i, t
		}
	}
	return best
}

// report is the checkpoint rule of one bundle of a replay: it reports the
// watermark once it has read Bytes bytes or more (1/maxReports of the
// replay) and the largest time read has risen by Step since From, the
// largest time at the previous report; or, whatever the time, once it has
// read bundleBytes.
type report struct {
	From, Step, Bytes int64
}

// due says whether a bundle that has read n bytes and reached the largest
// time maxTime reports the watermark now.
func (r report) due(n, maxTime int64) bool {
	if n >= bundleBytes {
		return true
	}
	if n < r.Bytes || maxTime == noTime {
		return false
	}
	return r.From == noTime || maxTime-r.From >= r.Step
}

// replayReader is one file of a replay, open and read up to its next line,
// which head holds, parsed.
type replayReader struct {
	source int
	name   string
	f      *openFile
	lr     *lineReader
	end    int64 // where the file's part of the replay ends
	head   headLine
	done   bool // no line left before end
}

// headLine is a line read ahead and parsed: a record (key, ts) or, when err
// is set, a dead letter.
type headLine struct {
	l     line
	start int64
	key   string
	ts    int64
	err   error
}

// resume makes the open files agree with the cursor c: a file open at the
// line where c starts it is read on from there; any other is reopened at
// that line.
func (f *replayFn) resume(ctx context.Context, c cursor) error {
	for i, file := range f.Files {
		r := f.open[i]
		if r != nil && !r.done && r.head.start == c.Start[i] && r.head.l.Number == c.Line[i] && r.end == c.End[i] {
			continue
		}
		f.closeFile(i)
		r = &replayReader{source: file.Source, name: file.Name, end: c.End[i]}
		f.open[i] = r
		if c.Start[i] >= c.End[i] {
			r.done = true
			continue
		}
		p := &f.Sources[file.Source]
		of, err := p.open(ctx, file.Name, c.Start[i])
		if err != nil {
			return err
		}
		r.f = of
		r.lr = newLineReader(of, p.MaxLineBytes, c.Line[i], c.Start[i])
		if err := f.advance(i); err != nil {
			return err
		}
	}
	return nil
}

// advance reads file i's next line into its head, or marks it done.
func (f *replayFn) advance(i int) error {
	r := f.open[i]
	start := r.lr.offset
	l, err := r.lr.next()
	if err == io.EOF || (err == nil && start >= r.end) {
		r.done = true
		f.closeFile(i)
		return nil
	}
	if err != nil {
		return fmt.Errorf("beamjoin: %s:%d: %w", r.name, r.lr.number+1, err)
	}
	h := headLine{l: l, start: start}
	h.key, h.ts, h.err = f.Sources[r.source].parse(l)
	r.head = h
	return nil
}

// closeFile closes file i, keeping what the replay knows of it.
func (f *replayFn) closeFile(i int) {
	if r := f.open[i]; r != nil && r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// replayClock is the state of a replay's watermark estimator, kept by the
// runner with its cursor across checkpoints. A replay is bounded: on
// Flink and Dataflow it runs in batch, where no savepoint or update
// carries its state from one release to another.
type replayClock struct {
	// MaxTime is the largest event time taken in, or noTime.
	MaxTime int64
	// Skew is what the replay keeps of the records that came more than
	// MaxSkew ahead of MaxTime (package skew).
	Skew skew.State
}

// lagEstimator is the replay's watermark estimator. The SDK reads its
// watermark and state from another goroutine (to answer the runner's
// progress and split requests) while ProcessElement raises it: every
// access holds mu.
type lagEstimator struct {
	mu           sync.Mutex
	c            replayClock
	lag, maxSkew int64 // milliseconds
}

func newLagEstimator(c replayClock, lag, maxSkew int64) *lagEstimator {
	return &lagEstimator{c: c, lag: lag, maxSkew: maxSkew}
}

// MaxTime is the largest event time taken in, or noTime.
func (e *lagEstimator) MaxTime() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.c.MaxTime
}

// state is the estimator's state, for the runner to keep.
func (e *lagEstimator) state() replayClock {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.c
}

// take takes in a record's time, unless it is more than the skew bound
// ahead of the largest time taken in (package skew), and reports whether
// it was.
func (e *lagEstimator) take(ts int64) (ahead bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ahead := skew.Take(&e.c.Skew, e.c.MaxTime, ts, e.maxSkew)
	if t != skew.None && t > e.c.MaxTime {
		e.c.MaxTime = t
	}
	return ahead
}

// CurrentWatermark is the largest time taken in less the lag.
func (e *lagEstimator) CurrentWatermark() time.Time {
	wm := int64(mtime.MinTimestamp)
	if m := e.MaxTime(); m != noTime && m-e.lag > wm {
		wm = m - e.lag
	}
	return mtime.Time(wm).ToTime()
}

// recordsOfFn passes on the records of one source, as KV<string, Record>
// with their event time.
type recordsOfFn struct {
	Source int
}

func (f *recordsOfFn) ProcessElement(et beam.EventTime, r sourcedRecord, emit func(beam.EventTime, string, Record)) {
	if r.Source == f.Source && !r.Late {
		emit(et, r.Key, r.Record)
	}
}

// deadLettersOfFn passes on the dead letters of one source.
type deadLettersOfFn struct {
	Source int
}

func (f *deadLettersOfFn) ProcessElement(d sourcedDeadLetter, emit func(DeadLetter)) {
	if d.Source == f.Source {
		emit(d.DeadLetter)
	}
}
