// This file holds the routes: the joins the package builds, each a row
// that names its Op and every part of it that differs from the other
// routes (its case of the plan, its join stage, how its records are
// written and counted, what its summary shows). A route's parts, its row
// among them, live in a file of its own (interval.go, window.go,
// cogroup.go, asof.go, multi.go); routes lists the rows. Adding a route is adding
// its file and its row here: see docs/design/jsonjoin.md.

package jsonjoin

import (
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterTypes[string, jsonl.Record, jsonl.Record]()
}

// route is one join of the package, as newPlan, the stages and the
// summary see it.
type route struct {
	// op names the route, as Config.Op and the command's subcommand.
	op Op
	// sides are the route's inputs in a Config, named: a join of two's
	// left and right (twoSides), the multi-way join's input1 to inputN.
	// The sources, the accounting, the summary and the progress take
	// them in this order, and a dead letter's or a count's side is its
	// name.
	sides func(Config) []side
	// span is how long an element waits in the join for partners, or the
	// time between two window ends: a replay reports its watermark each
	// time its event time has risen by a quarter of it (watermarkStep).
	// newPlan reads it right after plan, on a Config that plan took.
	span func(Config) time.Duration
	// plan is the route's case of the plan: it checks the Config's
	// settings for the route, refuses the other routes' settings that it
	// does not take (but those their refuseElsewhere refuses), has the
	// join check its options (join.Route.Check), and makes the join's
	// part, with the options that choose the join's path.
	plan func(Config) (joinPlan, error)
	// refuseElsewhere, when set, refuses the route's own settings, which
	// no other route takes, in a Config of another route: newPlan calls
	// the other routes' refuseElsewhere before a route's plan, so that a
	// new route's settings are refused without a change to the other
	// routes.
	refuseElsewhere func(Config) error
	// join is the join stage.
	join joinFunc
	// format and formatLate write a record and a late element of the
	// join as a line (a function registered with Beam).
	format, formatLate any
	// count and countLate make the DoFns that count them (with the
	// counter of the accounting stage), and countFate the one that counts
	// the fates of its elements, when the join tracks them
	// (join.TrackFates).
	count, countLate, countFate func(counter) any
	// outCounts are the counts of records written, in the order the
	// summary shows them; fates are the fates of an element of the
	// join, as FateColumns returns them.
	outCounts, fates []string
	// fatesInCounters says that the join's Beam counters count the fate
	// of every element, so that a summary of counters has them
	// (summarizeCounters).
	fatesInCounters bool
	// fromCounter, when set, is the name of the count that a Beam counter
	// of the join counts, for a summary of counters; without it, the
	// counters are named as the counts.
	fromCounter func(counter string) string
	// oneLateRecordEach says that the join writes one late record per
	// late element, so that Summary.Check wants as many as it counts late
	// (else at least as many: a window join's late element is written
	// once per window it missed), and Summary.String prints the fate
	// table without each side's accounting equation.
	oneLateRecordEach bool
}

// joinFunc is a join stage: it joins the records of the inputs, keyed
// and timestamped, in the order of the plan's sources (left, then right),
// as j says: with j.options, and j.inputs for a join that takes options
// per input.
type joinFunc func(s beam.Scope, j joinPlan, records []beam.PCollection) (join.Outputs, error)

// routes are the package's joins, in the order an error that wants one
// of them names them: newPlan knows an Op by its row (routeOf).
var routes = []route{
	intervalRoute,
	windowRoute,
	cogroupRoute,
	asofRoute,
	multiRoute,
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
// says them: "interval, window, cogroup, asof or multi".
func routeNames() string {
	var names []string
	for _, r := range routes {
		names = append(names, string(r.op))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
