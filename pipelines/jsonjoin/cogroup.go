// This file holds the cogroup's route (Op CoGroup, the beamjoin command's
// cogroup): its join stage and how its records are written and counted.
// Its case of the plan, and how its late elements are written and
// counted, are the window join's (window.go).

package jsonjoin

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function1x1(FormatGroup)
	register.DoFn2x0[Group, func(string, tally)](&countGroupFn{})
}

// CoGroup is join.CoGroup: all values of both inputs per key and window.
const CoGroup Op = "cogroup"

// cogroupRoute is the cogroup's row of routes.
var cogroupRoute = route{
	op:    CoGroup,
	sides: twoSides, span: windowSpan, plan: planCoGroup, join: joinCoGroup,
	format: FormatGroup, formatLate: FormatWindowLate, count: countGroupRecords, countLate: countWindowLate, countFate: countFate,
	outCounts: []string{"groups_out"},
	fates:     []string{"grouped", "late"},
}

// planCoGroup is the cogroup's case of the plan (planWindowed).
func planCoGroup(c Config) (joinPlan, error) { return planWindowed(c, join.RouteCoGroup) }

// joinCoGroup is the cogroup's stage: a cogroup record keeps each
// value's file and line, by which FormatGroup orders a group.
func joinCoGroup(s beam.Scope, j joinPlan, records []beam.PCollection) (join.Outputs, error) {
	return join.TryCoGroup[string, jsonl.Record, jsonl.Record](s, records[0], records[1], j.options...)
}

// Group is a cogroup record of JSON lines (see Result).
type Group = join.Group[string, jsonl.Record, jsonl.Record]

// FormatGroup writes a cogroup record:
// {"kind":"group","key":K,"left":[…],"right":[…],"time":MS,"window":{"start":MS,"end":MS}}.
// Each side's objects are sorted by file, then line, then the object's
// bytes (Beam's grouping keeps no order, and two Pub/Sub messages can
// share a line number), so the same group always prints the same; time
// is the window's max timestamp.
func FormatGroup(g Group) string {
	var w jsonWriter
	w.str("kind", "group")
	w.raw("key", g.Key)
	w.raw("left", array(g.Left))
	w.raw("right", array(g.Right))
	w.millis("time", g.WindowEnd.Add(-time.Millisecond))
	w.window(g.WindowStart, g.WindowEnd)
	return w.done()
}

func array(rs []jsonl.Record) string {
	rs = append([]jsonl.Record(nil), rs...)
	slices.SortFunc(rs, func(a, b jsonl.Record) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), bytes.Compare(a.Raw, b.Raw))
	})
	var b strings.Builder
	b.WriteString("[")
	for i, r := range rs {
		if i > 0 {
			b.WriteString(",")
		}
		b.Write(r.Raw)
	}
	b.WriteString("]")
	return b.String()
}

// countGroupFn counts cogroup records.
type countGroupFn struct {
	counter
}

func (f *countGroupFn) ProcessElement(_ Group, _ func(string, tally)) {
	f.hub.out()
	f.counts.add(countGroups, tally{N: 1})
}

func countGroupRecords(c counter) any { return &countGroupFn{counter: c} }
