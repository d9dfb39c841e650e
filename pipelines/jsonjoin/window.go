// This file holds the window join's route (Op Window, the beamjoin
// command's window): its case of the plan, which the cogroup shares
// (planWindowed), its join stage, and how its records and late elements
// are written and counted; the cogroup writes and counts its late
// elements the same way (cogroup.go).

package jsonjoin

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function1x1(FormatWindowResult)
	register.Function1x1(FormatWindowLate)
	register.DoFn2x0[WindowResult, func(string, tally)](&countWindowResultFn{})
	register.DoFn2x0[WindowLateElement, func(string, tally)](&countWindowLateFn{})
}

// Window is join.Window: pairs per key and window.
const Window Op = "window"

// windowRoute is the window join's row of routes.
var windowRoute = route{
	op:    Window,
	sides: twoSides, span: windowSpan, plan: planWindow, join: joinWindow,
	format: FormatWindowResult, formatLate: FormatWindowLate, count: countWindowResults, countLate: countWindowLate, countFate: countFate,
	outCounts: []string{"pairs_out", "left_unmatched_out", "right_unmatched_out"},
	fates:     []string{"matched", "unmatched", "expired", "late"},
}

// planWindow is the window join's case of the plan (planWindowed).
func planWindow(c Config) (joinPlan, error) { return planWindowed(c, join.RouteWindow) }

// planWindowed is the case of the plan of a window join or a cogroup
// (route). A replay or a stream takes the late-counting path
// (join.ReportLate, join.TrackFates), since its elements can come after
// their window closed. Files read whole are bounded, nothing in them is
// late, and the join takes the CoGroupByKey path, which counts no fates
// (the summary then shows none).
func planWindowed(c Config, route join.Route) (joinPlan, error) {
	switch {
	case c.Lower != 0 || c.Upper != 0 || c.LowerExclusive || c.UpperExclusive:
		return joinPlan{}, invalid("Lower", "", fmt.Sprintf("%s takes no interval bounds", c.Op))
	case c.Emit != join.EmitImmediate:
		return joinPlan{}, invalid("Emit", "", fmt.Sprintf("%s takes no emission mode: results come when a window closes", c.Op))
	case c.MaxBufferedPerKey != 0:
		return joinPlan{}, invalid("MaxBufferedPerKey", "", fmt.Sprintf("%s takes no buffer cap", c.Op))
	case c.UniqueLeft:
		return joinPlan{}, invalid("UniqueLeft", "", fmt.Sprintf("%s takes no unique-left declaration: it is the interval join's", c.Op))
	case route == join.RouteCoGroup && c.Type != join.Inner:
		return joinPlan{}, invalid("Type", "", "cogroup takes no join type: every group is reported")
	case c.Gap != 0 && (c.Size != 0 || c.Slide != 0):
		return joinPlan{}, invalid("Gap", "", fmt.Sprintf("session windows (gap %v) take no size or slide", c.Gap))
	}
	opts := []join.Option{join.WindowInto(c.windowFn())}
	if route == join.RouteWindow {
		opts = append(opts, c.Type)
	}
	if c.AllowedLateness != 0 {
		opts = append(opts, join.AllowedLateness(c.AllowedLateness))
	}
	if err := route.Check(opts...); err != nil {
		return joinPlan{}, err
	}
	if c.Replay || c.streamingBatch || c.Streaming() {
		opts = append(opts, join.ReportLate(), join.TrackFates())
	}
	return joinPlan{options: opts}, nil
}

// windowFn returns the windows of a window join or cogroup: sessions when
// Gap is set, sliding windows when Slide is, else fixed windows.
func (c Config) windowFn() *window.Fn {
	switch {
	case c.Gap != 0:
		return window.NewSessions(c.Gap)
	case c.Slide != 0:
		return window.NewSlidingWindows(c.Slide, c.Size)
	}
	return window.NewFixedWindows(c.Size)
}

// windowSpan is the time between two window ends: the session gap, the
// slide, or the size.
func windowSpan(c Config) time.Duration {
	switch {
	case c.Gap != 0:
		return c.Gap
	case c.Slide != 0:
		return c.Slide
	}
	return c.Size
}

// joinWindow is the window join's stage.
func joinWindow(s beam.Scope, j joinPlan, records []beam.PCollection) (join.Outputs, error) {
	return join.TryWindow[string, jsonl.Record, jsonl.Record](s, records[0], records[1], j.options...)
}

// The record types of the window join of JSON lines (see Result).
type (
	// WindowResult is a window join record.
	WindowResult = join.WindowResult[string, jsonl.Record, jsonl.Record]
	// WindowLateElement is an element the window join or the cogroup
	// judged late, with the window it missed.
	WindowLateElement = join.WindowLateElement[string, jsonl.Record, jsonl.Record]
)

// FormatWindowResult writes a window join record: FormatResult's fields and
// "window":{"start":MS,"end":MS}, the window [start, end). time is the
// window's max timestamp, end - 1.
func FormatWindowResult(r WindowResult) string {
	var w jsonWriter
	w.record(Result{Kind: r.Kind, Key: r.Key, Left: r.Left, Right: r.Right, LeftTime: r.LeftTime, RightTime: r.RightTime, Time: r.Time})
	w.window(r.WindowStart, r.WindowEnd)
	return w.done()
}

// FormatWindowLate writes an element that the window join or the cogroup
// judged late: FormatLate's fields and "window":{"start":MS,"end":MS}, the
// window it missed. With sliding windows an element can miss several
// windows, one line each, and still be in others.
func FormatWindowLate(l WindowLateElement) string {
	var w jsonWriter
	w.late(l.Side, l.Key, l.Time, l.Left, l.Right)
	w.window(l.WindowStart, l.WindowEnd)
	return w.done()
}

// countWindowResultFn counts window join records.
type countWindowResultFn struct {
	counter
}

func (f *countWindowResultFn) ProcessElement(r WindowResult, _ func(string, tally)) {
	f.hub.out()
	f.counts.add(resultCount(r.Kind, r.Left == nil), tally{N: 1})
}

func countWindowResults(c counter) any { return &countWindowResultFn{counter: c} }

// countWindowLateFn counts the late records of the window join or the
// cogroup per side: one per element and window it missed.
type countWindowLateFn struct {
	counter
}

func (f *countWindowLateFn) ProcessElement(l WindowLateElement, _ func(string, tally)) {
	f.counts.add(l.Side.String()+"_"+countLateOut, tally{N: 1})
}

// countWindowLate makes a countWindowLateFn, which feeds no hub (see
// countLate).
func countWindowLate(counter) any { return &countWindowLateFn{} }
