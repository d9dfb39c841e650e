// This file holds the run's accounting: what became of every input line,
// counted from the records themselves with Beam combines, never from Beam
// counters (Prism v2.77 can lose a counter's first increments when two
// bundles report it at once). The accounting stage, account, counts and
// writes the counts as a few JSON lines where the plan says
// (Config.Accounting); ReadSummary (summary.go) reads them back once the
// job is done. The counting DoFns also feed this process's progress hub
// (progress.go).

package jsonjoin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*tally)(nil)).Elem())
	register.DoFn4x0[beam.EventTime, string, jsonl.Record, func(string, tally)](&countRecordFn{})
	register.DoFn2x0[jsonl.DeadLetter, func(string, tally)](&countDeadLetterFn{})
	register.DoFn2x0[Fate, func(string, tally)](&countFateFn{})
	register.DoFn4x0[beam.EventTime, string, jsonl.Record, func(string, tally)](&countReaderLateFn{})
	register.Function1x2(fatesCountedTally)
	register.Function2x1(addTallies)
	register.Function2x1(formatTally)
	register.Emitter2[string, tally]()
}

// tally is a count of records of one kind. For dead letters, whose kind is
// a side and a reason, it also holds the first of them by file and line,
// to show.
type tally struct {
	N       int64
	Example jsonl.DeadLetter // Line is 0 when there is none
}

// addTallies is the combine: counts add up, the first example stays.
func addTallies(a, b tally) tally {
	a.N += b.N
	if b.Example.Line != 0 && (a.Example.Line == 0 || before(b.Example, a.Example)) {
		a.Example = b.Example
	}
	return a
}

func before(a, b jsonl.DeadLetter) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Line < b.Line
}

// The names of the counts, as Summary.Counts holds them: per side
// ("left_in", "input2_in"), or of records written ("pairs_out").
const (
	countIn           = "in"      // valid lines: records that went to the join
	countInvalid      = "invalid" // dead letters
	countUnmatchedOut = "unmatched_out"
	countLateOut      = "late_out"
	countPairs        = "pairs_out"
	countRetractions  = "retractions_out"
	countGroups       = "groups_out"
	// countFates marks a run that counted the join's fates: its
	// tally is 1 per side, so that a run whose join lost every element is
	// told from a run that did not count fates.
	countFates = "fates_counted"
)

// reasonSep separates a dead-letter count's name from its reason in the key
// of its tally.
const reasonSep = "\t"

// bundleCounts are the tallies of one bundle, by name: a DoFn adds to them
// as it sees records, and emits them when the bundle finishes, so that
// counting costs a map update per record and the combine sees a few
// tallies per bundle. Emitted from FinishBundle, they are in the global
// window, which is the accounting's.
type bundleCounts map[string]tally

func (b *bundleCounts) add(name string, t tally) {
	if *b == nil {
		*b = bundleCounts{}
	}
	(*b)[name] = addTallies((*b)[name], t)
}

func (b *bundleCounts) flush(emit func(string, tally)) {
	for name, t := range *b {
		emit(name, t)
	}
	clear(*b)
}

// counter is what every counting DoFn has: the run's progress hub, found
// in Setup, and the bundle's tallies, emitted in FinishBundle.
type counter struct {
	Hub    string // the id of the run's progress hub; none on a remote worker
	hub    *hub
	counts bundleCounts
}

// Setup finds the progress hub.
func (c *counter) Setup() { c.hub = lookupHub(c.Hub) }

// FinishBundle emits the bundle's tallies.
func (c *counter) FinishBundle(emit func(string, tally)) { c.counts.flush(emit) }

// countRecordFn counts one side's records, and feeds the progress hub.
type countRecordFn struct {
	Side string
	counter
}

func (f *countRecordFn) ProcessElement(t beam.EventTime, _ string, _ jsonl.Record, _ func(string, tally)) {
	f.hub.line(f.Side, t.Milliseconds())
	f.counts.add(f.Side+"_"+countIn, tally{N: 1})
}

// countDeadLetterFn counts one side's dead letters by reason, keeping the
// first of each, and feeds the progress hub.
type countDeadLetterFn struct {
	Side      string
	Key, Time string // the side's field paths, to tell a bad key from a bad time
	counter
}

func (f *countDeadLetterFn) ProcessElement(d jsonl.DeadLetter, _ func(string, tally)) {
	f.hub.line(f.Side, noTime)
	f.counts.add(f.Side+"_"+countInvalid+reasonSep+reason(d.Error, f.Key, f.Time), tally{N: 1, Example: d})
}

// reason is the kind of a dead letter's error, without what varies from
// line to line: `field "ts": missing`, `field "ts": not a valid time`, `bad
// JSON`. It reads the errors of package jsonl (see jsonl.Fields.Parse).
func reason(err, key, time string) string {
	switch {
	case strings.HasPrefix(err, "bad JSON"):
		return "bad JSON"
	case strings.HasPrefix(err, "line is ") && strings.Contains(err, "-byte limit"):
		return "line over the size limit"
	}
	for _, f := range []struct{ path, what string }{{key, "key"}, {time, "time"}} {
		prefix := fmt.Sprintf("field %q: ", f.path)
		rest, ok := strings.CutPrefix(err, prefix)
		if !ok {
			continue
		}
		if rest == "missing" || strings.HasSuffix(rest, " is not an object") {
			return prefix + "missing"
		}
		return prefix + "not a valid " + f.what
	}
	return err
}

// resultCount is the name of the count of an interval, as-of or window
// join record of kind k, noLeft when it has no left element.
func resultCount(k join.Kind, noLeft bool) string {
	switch k {
	case join.KindPair:
		return countPairs
	case join.KindRetract:
		return countRetractions
	}
	if noLeft {
		return "right_" + countUnmatchedOut
	}
	return "left_" + countUnmatchedOut
}

// Fate is what became of an element that reached the window join or the
// cogroup.
type Fate = join.Fate[string]

// countFateFn counts the fates of the window join's or the cogroup's
// elements per side and outcome ("left_matched", "right_late"): one per
// element that reached the join.
type countFateFn struct {
	counter
}

func (f *countFateFn) ProcessElement(fate Fate, _ func(string, tally)) {
	f.counts.add(fate.Side.String()+"_"+fate.Outcome.String(), tally{N: 1})
}

// countFate makes a countFateFn; fates are not progress, so it feeds no
// hub.
func countFate(counter) any { return &countFateFn{} }

// countReaderLate is the name of the count of a side's lines that the
// reader judged late ("left_reader_late"), and of its Beam counter.
const countReaderLate = jsonl.ReaderLate

// countReaderLateFn counts a side's lines that the reader judged late, as
// reader_late and as late records written (late_out), and feeds the
// progress hub: they are lines read.
type countReaderLateFn struct {
	Side string
	counter
}

func (f *countReaderLateFn) ProcessElement(t beam.EventTime, _ string, _ jsonl.Record, _ func(string, tally)) {
	f.hub.line(f.Side, t.Milliseconds())
	f.counts.add(f.Side+"_"+countReaderLate, tally{N: 1})
	f.counts.add(f.Side+"_"+countLateOut, tally{N: 1})
}

// fatesCounted is the tally that marks a run whose fates were counted
// (countFates), one per side.
func fatesCounted(s beam.Scope, sides []accountedSide) beam.PCollection {
	var names []any
	for _, sd := range sides {
		names = append(names, sd.name)
	}
	return beam.ParDo(s, fatesCountedTally, beam.Create(s, names...))
}

func fatesCountedTally(side string) (string, tally) { return side + "_" + countFates, tally{N: 1} }

// accountingLine is one line of the accounting file.
type accountingLine struct {
	Count   string            `json:"count"`
	Reason  string            `json:"reason,omitempty"`
	N       int64             `json:"n"`
	Example *jsonl.DeadLetter `json:"example,omitempty"`
}

func formatTally(key string, t tally) string {
	l := accountingLine{Count: key, N: t.N}
	l.Count, l.Reason, _ = strings.Cut(key, reasonSep)
	if t.Example.Line != 0 {
		l.Example = &t.Example
	}
	b, err := json.Marshal(l)
	if err != nil {
		panic(err) // strings and numbers only
	}
	return string(b)
}

// account is the accounting stage: it counts, per input, the records
// read, the dead letters by reason and the lines the reader judged late,
// and the records and late elements that the join made (out) and their
// fates, when the join tracks them; the counting DoFns feed the progress
// hub a.hub. When a.path is set, it writes there the counts summed over
// the whole run, each tally being in the global window (see bundleCounts).
func account(s beam.Scope, a accountingPlan, ins []input, out join.Outputs) {
	c := counter{Hub: a.hub}
	var counts []beam.PCollection
	for i, in := range ins {
		side := a.sides[i]
		counts = append(counts,
			beam.ParDo(s, &countRecordFn{Side: side.name, counter: c}, global(s, in.Records)),
			beam.ParDo(s, &countDeadLetterFn{Side: side.name, Key: side.fields.Key, Time: side.fields.Time, counter: c}, global(s, in.DeadLetters)))
		if in.ReaderLate.IsValid() {
			counts = append(counts, beam.ParDo(s, &countReaderLateFn{Side: side.name, counter: c}, global(s, in.ReaderLate)))
		}
	}
	counts = append(counts, beam.ParDo(s, a.count(c), global(s, out.Records)))
	if out.Late.IsValid() {
		counts = append(counts, beam.ParDo(s, a.countLate(c), global(s, out.Late)))
	}
	if out.Fates.IsValid() {
		counts = append(counts, beam.ParDo(s, a.countFate(c), global(s, out.Fates)), fatesCounted(s, a.sides))
	}
	if a.path == "" {
		return
	}
	s = s.Scope("accounting")
	all := beam.Flatten(s, counts...)
	sums := beam.CombinePerKey(s, addTallies, all)
	jsonl.Write(s, a.path, beam.ParDo(s, formatTally, sums))
}

// global puts col in the global window, the accounting's: the counting
// DoFns emit their tallies when a bundle finishes, in the global window.
func global(s beam.Scope, col beam.PCollection) beam.PCollection {
	return beam.WindowInto(s, window.NewGlobalWindows(), col)
}
