// This file holds the routes: the joins the package builds, each named by
// its Op with every part of it that differs from the other routes (its
// case of the plan, its join stage, how its records are written and
// counted, what its summary shows), and the join stages themselves.
// Adding a route is adding a row to routes with those parts: see
// docs/design/jsonjoin.md.

package jsonjoin

import (
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterTypes[string, jsonl.Record, jsonl.Record]()
	register.Function2x2(dropOrigin)
}

// route is one join of the package, as newPlan, the stages and the
// summary see it.
type route struct {
	// op names the route, as Config.Op and the command's subcommand.
	op Op
	// span is how long an element waits in the join for partners, or the
	// time between two window ends: a replay reports its watermark each
	// time its event time has risen by a quarter of it (watermarkStep).
	// newPlan reads it before it checks the Config.
	span func(Config) time.Duration
	// plan is the route's case of the plan (plan.go): it checks the
	// Config's settings for the route and makes the join's part.
	plan func(Config) (joinPlan, error)
	// join is the join stage.
	join joinFunc
	// format and formatLate write a record and a late element of the
	// join as a line (format.go).
	format, formatLate any
	// count and countLate make the DoFns that count them (accounting.go).
	count, countLate func(counter) any
	// outCounts are the counts of records written, in the order the
	// summary shows them; fates are the fates of an element of the
	// join, as FateColumns returns them.
	outCounts, fates []string
	// fatesInCounters says that the join's Beam counters count the fate
	// of every element, so that a summary of counters has them
	// (summarizeCounters).
	fatesInCounters bool
	// oneLateRecordEach says that the join writes one late record per
	// late element, so that Summary.Check wants as many as it counts late
	// (else at least as many: a window join's late element is written
	// once per window it missed), and Summary.String prints the fate
	// table without each side's accounting equation.
	oneLateRecordEach bool
}

// joinFunc is a join stage: it joins the records of the inputs, keyed
// and timestamped, in the order of the plan's sources (left, then
// right), with opts.
type joinFunc func(s beam.Scope, opts []join.Option, records []beam.PCollection) (join.Outputs, error)

// routes are the package's joins: newPlan knows an Op by its row
// (routeOf).
var routes = []route{
	{
		op:   Interval,
		span: intervalSpan, plan: planInterval, join: joinInterval,
		format: FormatResult, formatLate: FormatLate, count: countResults, countLate: countLate,
		outCounts:       []string{"pairs_out", "retractions_out", "left_unmatched_out", "right_unmatched_out", "left_late_out", "right_late_out"},
		fates:           []string{"matched", "unmatched", "expired", "evicted", "late"},
		fatesInCounters: true, oneLateRecordEach: true,
	},
	{
		op:   Window,
		span: windowSpan, plan: planWindow, join: joinWindow,
		format: FormatWindowResult, formatLate: FormatWindowLate, count: countWindowResults, countLate: countWindowLate,
		outCounts: []string{"pairs_out", "left_unmatched_out", "right_unmatched_out"},
		fates:     []string{"matched", "unmatched", "expired", "late"},
	},
	{
		op:   CoGroup,
		span: windowSpan, plan: planCoGroup, join: joinCoGroup,
		format: FormatGroup, formatLate: FormatWindowLate, count: countGroupRecords, countLate: countWindowLate,
		outCounts: []string{"groups_out"},
		fates:     []string{"grouped", "late"},
	},
	{
		op:   AsOf,
		span: asofSpan, plan: planAsOf, join: joinAsOf,
		format: FormatResult, formatLate: FormatLate, count: countResults, countLate: countLate,
		outCounts:         []string{"pairs_out", "retractions_out", "left_unmatched_out", "left_late_out", "right_late_out"},
		fates:             []string{"matched", "unmatched", "expired", "evicted", "late"},
		oneLateRecordEach: true,
	},
}

// joinInterval is the interval join's stage. Its records are written
// from the lines alone (FormatResult, FormatLate), so the file and line
// number of each are not carried through the join, where they would be
// held in state or grouped for nothing (a third of the bytes of a short
// line on a long path).
func joinInterval(s beam.Scope, opts []join.Option, records []beam.PCollection) (join.Outputs, error) {
	l, r := beam.ParDo(s.Scope("left"), dropOrigin, records[0]), beam.ParDo(s.Scope("right"), dropOrigin, records[1])
	return join.TryInterval[string, jsonl.Record, jsonl.Record](s, l, r, opts...)
}

// joinAsOf is the as-of join's stage. As for Interval, records are
// written from the lines alone; and the tie rule (the greater encoded
// version wins) must see the line alone, or two versions of one time
// would be told apart by their line numbers, which depend on the order of
// the file.
func joinAsOf(s beam.Scope, opts []join.Option, records []beam.PCollection) (join.Outputs, error) {
	l, r := beam.ParDo(s.Scope("left"), dropOrigin, records[0]), beam.ParDo(s.Scope("right"), dropOrigin, records[1])
	return join.TryAsOf[string, jsonl.Record, jsonl.Record](s, l, r, opts...)
}

// joinWindow is the window join's stage.
func joinWindow(s beam.Scope, opts []join.Option, records []beam.PCollection) (join.Outputs, error) {
	return join.TryWindow[string, jsonl.Record, jsonl.Record](s, records[0], records[1], opts...)
}

// joinCoGroup is the cogroup's stage: a cogroup record keeps each
// value's file and line, by which FormatGroup orders a group.
func joinCoGroup(s beam.Scope, opts []join.Option, records []beam.PCollection) (join.Outputs, error) {
	return join.TryCoGroup[string, jsonl.Record, jsonl.Record](s, records[0], records[1], opts...)
}

// routeOf returns the route of op, and whether there is one.
func routeOf(op Op) (route, bool) {
	for _, r := range routes {
		if r.op == op {
			return r, true
		}
	}
	return route{}, false
}

// routeNames are the routes' names, as an error that wants one of them
// says them: "interval, window, cogroup or asof".
func routeNames() string {
	var names []string
	for _, r := range routes {
		names = append(names, string(r.op))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// dropOrigin keeps of a record only its line: Raw, not File and Line.
func dropOrigin(key string, r jsonl.Record) (string, jsonl.Record) {
	return key, jsonl.Record{Raw: r.Raw}
}
