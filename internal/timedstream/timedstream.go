// Package timedstream plays a fixed script of timestamped elements and
// watermark advances as an unbounded PCollection, on any runner.
//
// Beam's TestStream does the same on Prism, but Flink's portable runner
// does not run it for Go, and Dataflow not at all; a splittable DoFn with a
// watermark estimator runs everywhere, and makes a runner take its
// streaming path (on Flink, the streaming translator). Each step of the
// script is one bundle of the reader: its elements, then its watermark,
// reported with the reader's checkpoint at the end of the step, so that
// downstream stages see event time move between steps as on a live stream.
// An element behind a watermark already reported is late downstream, as
// it would be from a real source.
//
// The state of a read is the index of the next step, in the runner's
// checkpoint of the splittable DoFn (offsetrange.Restriction): a runner that
// restores a checkpoint resumes the script where the checkpoint left it.
package timedstream

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn5x2[context.Context, *estimator, *sdf.LockRTracker, []byte, func(beam.EventTime, string),
		sdf.ProcessContinuation, error](&playFn{})
	register.Emitter2[beam.EventTime, string]()
	beam.RegisterType(reflect.TypeOf((*Step)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Element)(nil)).Elem())
}

// Element is a value and its event time in milliseconds since the epoch.
type Element struct {
	Time  int64
	Value string
}

// Step is one bundle of the script: its elements, in order, then a
// watermark advance to Watermark (milliseconds since the epoch). A
// watermark lower than one already reached leaves it where it is.
type Step struct {
	Elements  []Element
	Watermark int64
}

// Script is a list of steps; its end takes the watermark to infinity.
type Script []Step

// Add appends a step of elements that leaves the watermark where it is.
func (s Script) Add(elements ...Element) Script {
	return append(s, Step{Elements: elements, Watermark: math.MinInt64})
}

// Advance appends a step that advances the watermark to t.
func (s Script) Advance(t int64) Script {
	return append(s, Step{Watermark: t})
}

// Create plays script as a PCollection<string> of the elements' values,
// each with its element's event time. The PCollection is unbounded.
func Create(s beam.Scope, script Script) beam.PCollection {
	return CreatePaced(s, script, 0)
}

// CreatePaced is Create with a pause of pace before each step, so that a
// runner's own checkpoints fall between the steps of a script played on
// Flink. The reader sleeps in its bundle: Flink's portable runner (Beam
// 2.62) resumes a checkpointed splittable DoFn at once, whatever delay it
// asks for, and Prism v2.77 can declare a job stuck when several
// splittable DoFns ask for one.
func CreatePaced(s beam.Scope, script Script, pace time.Duration) beam.PCollection {
	s = s.Scope("timedstream.Create")
	for i, st := range script {
		for _, e := range st.Elements {
			if e.Time < mtime.MinTimestamp.Milliseconds() || e.Time > mtime.MaxTimestamp.Milliseconds() {
				panic(fmt.Sprintf("timedstream: step %d: element %q has time %d, outside Beam's range", i, e.Value, e.Time))
			}
		}
	}
	return beam.ParDo(s, &playFn{Script: script, Pace: pace}, beam.Impulse(s))
}

// playFn plays the script, one step per bundle.
type playFn struct {
	Script Script
	Pace   time.Duration
}

// CreateInitialRestriction covers every step.
func (f *playFn) CreateInitialRestriction(_ []byte) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: int64(len(f.Script))}
}

// SplitRestriction keeps the script whole: one reader plays it in order.
func (f *playFn) SplitRestriction(_ []byte, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

// RestrictionSize is the number of steps left.
func (f *playFn) RestrictionSize(_ []byte, r offsetrange.Restriction) float64 {
	return r.Size()
}

// CreateTracker tracks the steps played.
func (f *playFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(r))
}

// InitialWatermarkEstimatorState starts the watermark at the impulse's time.
func (f *playFn) InitialWatermarkEstimatorState(et beam.EventTime, _ offsetrange.Restriction, _ []byte) int64 {
	return int64(et)
}

// CreateWatermarkEstimator restores the watermark reported last.
func (f *playFn) CreateWatermarkEstimator(ms int64) *estimator { return &estimator{ms: ms} }

// WatermarkEstimatorState is the watermark to restore.
func (f *playFn) WatermarkEstimatorState(e *estimator) int64 { return e.ms }

// ProcessElement plays one step and checkpoints, so that the step's
// watermark is reported before the next step's elements.
func (f *playFn) ProcessElement(ctx context.Context, we *estimator, rt *sdf.LockRTracker, _ []byte, emit func(beam.EventTime, string)) (sdf.ProcessContinuation, error) {
	i := rt.GetRestriction().(offsetrange.Restriction).Start
	if !rt.TryClaim(i) {
		return sdf.StopProcessing(), nil
	}
	if f.Pace > 0 {
		time.Sleep(f.Pace)
	}
	st := f.Script[i]
	for _, e := range st.Elements {
		emit(mtime.FromMilliseconds(e.Time), e.Value)
	}
	if st.Watermark > we.ms {
		we.ms = st.Watermark
	}
	if i+1 == int64(len(f.Script)) {
		return sdf.StopProcessing(), nil
	}
	return sdf.ResumeProcessingIn(0), nil
}

// estimator is a watermark set by the script alone.
type estimator struct{ ms int64 }

// CurrentWatermark is the last step's watermark.
func (e *estimator) CurrentWatermark() time.Time { return mtime.Time(e.ms).ToTime() }
