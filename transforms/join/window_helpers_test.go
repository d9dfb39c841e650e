package join_test

// Helpers for the tests and examples of Connect, CoGroup and Window: timed
// test inputs, and a sink that hands a pipeline's output back to the test.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

func init() {
	register.DoFn1x0[string](&lineSinkFn{})
	register.Function3x0(splitTimed)
	register.Emitter3[beam.EventTime, string, string]()
	register.Emitter3[beam.EventTime, string, note]()
}

// note is the right inputs' value type in these tests: a struct, so that
// the joins are tested with a schema-coded type as well as with strings.
type note struct{ Text string }

// timed is one test input element: a value of the left (a string) or the
// right input (a note), with its key and event time.
type timed struct {
	Right bool
	Key   string
	Ms    int64
	Value string
}

func leftAt(key string, at time.Duration, value string) timed {
	return timed{Key: key, Ms: at.Milliseconds(), Value: value}
}

func rightAt(key string, at time.Duration, value string) timed {
	return timed{Right: true, Key: key, Ms: at.Milliseconds(), Value: value}
}

// timedInputs returns the left elements as a PCollection<KV<string,string>>
// and the right ones as a PCollection<KV<string,note>>, timestamped.
func timedInputs(s beam.Scope, elements []timed) (left, right beam.PCollection) {
	col := beam.CreateList(s, elements)
	return beam.ParDo2(s, splitTimed, col)
}

// windowedInputs is timedInputs with both sides windowed by fn, when fn is
// not nil: the caller's own windowing, which CoGroup and Window must honour.
func windowedInputs(s beam.Scope, elements []timed, fn *window.Fn) (left, right beam.PCollection) {
	left, right = timedInputs(s, elements)
	if fn != nil {
		left = beam.WindowInto(s, fn, left)
		right = beam.WindowInto(s, fn, right)
	}
	return left, right
}

func splitTimed(e timed, left func(beam.EventTime, string, string), right func(beam.EventTime, string, note)) {
	at := beam.EventTime(e.Ms)
	if e.Right {
		right(at, e.Key, note{Text: e.Value})
		return
	}
	left(at, e.Key, e.Value)
}

// lineSinks holds the lines each lineSinkFn received. Prism runs pipelines in this
// process (LOOPBACK), so a DoFn can hand its input back through a variable.
var lineSinks = struct {
	sync.Mutex
	lines map[string][]string
}{lines: map[string][]string{}}

var lineSinkCount atomic.Int64

// A pipeline that prismrun runs again starts from nothing: drop what the
// failed attempt's sinks received.
func init() {
	prismrun.OnRetry(func() {
		lineSinks.Lock()
		defer lineSinks.Unlock()
		clear(lineSinks.lines)
	})
}

type lineSinkFn struct{ Name string }

func (f *lineSinkFn) ProcessElement(line string) {
	lineSinks.Lock()
	defer lineSinks.Unlock()
	lineSinks.lines[f.Name] = append(lineSinks.lines[f.Name], line)
}

// gather adds a sink for lines, a PCollection<string>, and returns a
// function that, once the pipeline has run, returns the lines sorted.
func gather(s beam.Scope, lines beam.PCollection) func() []string {
	name := fmt.Sprintf("sink%d", lineSinkCount.Add(1))
	beam.ParDo0(s, &lineSinkFn{Name: name}, lines)
	return func() []string {
		lineSinks.Lock()
		defer lineSinks.Unlock()
		got := slices.Clone(lineSinks.lines[name])
		slices.Sort(got)
		return got
	}
}

// windowComplaint says how w, the window a record or Group is in, differs
// from the window it names, [start, end), or returns "" if it does not.
// The late-counting path puts a session's records in a window of the gap
// that starts at their timestamp, the joined session's max timestamp, so
// that they merge downstream into one window per joined session
// (docs/design/window.md); such a window is accepted too.
func windowComplaint(w beam.Window, start, end time.Time) string {
	switch w := w.(type) {
	case window.GlobalWindow:
		if windowName(start, end) == "global" {
			return ""
		}
	case window.IntervalWindow:
		ws, we := w.Start.ToTime(), w.End.ToTime()
		if ws.Equal(start) && we.Equal(end) || ws.Equal(end.Add(-time.Millisecond)) {
			return ""
		}
	}
	return fmt.Sprintf(" (BAD WINDOW: in %v)", w)
}

// since writes t as the duration since the Unix epoch, the way the tests
// write event times: "9.999s".
func since(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Sub(time.UnixMilli(0)).String()
}

// span writes a window's bounds: "[10s,20s)".
func bounds(start, end time.Time) string {
	return "[" + since(start) + "," + since(end) + ")"
}

// sortedJoin writes values sorted: "[l1 l2]".
func sortedJoin(vs []string) string {
	return "[" + strings.Join(sortedList(vs), " ") + "]"
}

// sorted returns a sorted copy of vs.
func sortedList(vs []string) []string {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs
}
