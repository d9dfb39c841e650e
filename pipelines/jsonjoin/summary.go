// This file holds the Summary of a run: read back from the accounting
// (accounting.go), or made from the runner's counters, and shown and
// checked as the command does.

package jsonjoin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Summary is what became of a run's input lines and what the run wrote.
type Summary struct {
	Op Op
	// Sides are the names of the inputs, in order, as the counts of each
	// are prefixed: input1 to inputN for a multi-way join; nil for the
	// joins of two, whose sides are left and right.
	Sides []string
	// Ran is false when the runner ran nothing: a dry run, which only
	// translates the job.
	Ran bool
	// FromRecords says that the counts were made from the run's records
	// (see Config.Accounting); otherwise they are the runner's Beam counters
	// of namespace "beamjoin", which Prism v2.77 can under-report.
	FromRecords bool
	// Fates says that the counts include what became of every element
	// that reached the join (FateColumns), so that Check can account for
	// each.
	Fates bool
	// Counts are per side, "left_" or "right_" (or "input1_" …) and read
	// (lines), invalid
	// (dead letters), in (records that went to the join), reader_late
	// (records that the reader of a replay judged late and sent to the
	// late output, not to the join; see the package doc's Replay), the fates
	// matched, unmatched, expired, evicted, grouped and late, unmatched_out
	// and late_out (records written: for window and cogroup, one per
	// element and window it missed); and of records written: pairs_out,
	// retractions_out, groups_out, rows_out (multi).
	Counts map[string]int64
	// DeadLetters are the invalid lines per side and reason, in the order
	// of the sides, then by the most lines.
	DeadLetters []DeadLetters
	// Stream is, for a streaming job (see Config.Streaming) whose workers
	// ran in this process, what it had done when it stopped, as counted
	// here: its lines (messages) read per side and its records made. It is
	// nil otherwise; a streaming job has no Counts.
	Stream *Progress
	// JobID is the runner's ID of a job that went on running when Run
	// returned: a job submitted asynchronously (Dataflow's --async), which
	// the caller waits for or leaves. It is empty otherwise.
	JobID string
}

// DeadLetters are the invalid lines of one side that have one reason.
type DeadLetters struct {
	Side string // "left", "right", or "input1" …
	// Reason is what is wrong with them, without what varies from line to
	// line: `field "ts": missing`, `field "ts": not a valid time`, `bad
	// JSON`, `not a JSON object`, `blank line`, `line over the size limit`.
	Reason string
	N      int64
	// Example is the first of them, by file and line.
	Example jsonl.DeadLetter
}

// leftRight are the sides of the joins of two, a Summary's sides when its
// Sides are nil.
var leftRight = []string{"left", "right"}

// sides are the names of s's inputs: its Sides, or left and right.
func (s Summary) sides() []string {
	if s.Sides == nil {
		return leftRight
	}
	return s.Sides
}

// summarySides are a Summary's Sides for inputs named names: nil for left
// and right.
func summarySides(names []string) []string {
	if slices.Equal(names, leftRight) {
		return nil
	}
	return names
}

func (s *Summary) sortDeadLetters() {
	sides := s.sides()
	sort.SliceStable(s.DeadLetters, func(i, j int) bool {
		a, b := s.DeadLetters[i], s.DeadLetters[j]
		if a.Side != b.Side {
			return slices.Index(sides, a.Side) < slices.Index(sides, b.Side)
		}
		if a.N != b.N {
			return a.N > b.N
		}
		return a.Reason < b.Reason
	})
}

// ReadSummary reads the accounting that a run of the join c describes
// wrote to c.Accounting, local or in a Beam file system such as gs://.
func ReadSummary(ctx context.Context, c Config) (Summary, error) {
	var sides []string
	for _, sd := range c.sides() {
		sides = append(sides, sd.name)
	}
	return readSummary(ctx, c.Op, sides, c.Accounting)
}

// readSummary reads the accounting of a join of op, with inputs named
// sides, at path.
func readSummary(ctx context.Context, op Op, sides []string, path string) (Summary, error) {
	sum := Summary{Op: op, Sides: summarySides(sides), Ran: true, FromRecords: true, Counts: map[string]int64{}}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return sum, fmt.Errorf("beamjoin: the run's accounting %s: %w", path, err)
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return sum, fmt.Errorf("beamjoin: the run's accounting %s: %w", path, err)
	}
	defer r.Close()
	if err := sum.read(r); err != nil {
		return sum, fmt.Errorf("beamjoin: the run's accounting %s: %w", path, err)
	}
	return sum, nil
}

// read adds the counts of an accounting file to s.
func (s *Summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l accountingLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		switch side, name, _ := strings.Cut(l.Count, "_"); {
		case name == countFates:
			s.Fates = true
		case name == countInvalid:
			s.Counts[l.Count] += l.N
			d := DeadLetters{Side: side, Reason: l.Reason, N: l.N}
			if l.Example != nil {
				d.Example = *l.Example
			}
			s.DeadLetters = append(s.DeadLetters, d)
		default:
			s.Counts[l.Count] += l.N
		}
	}
	for _, side := range s.sides() {
		s.Counts[side+"_read"] = s.Counts[side+"_"+countIn] + s.Counts[side+"_"+countReaderLate] + s.Counts[side+"_"+countInvalid]
	}
	s.sortDeadLetters()
	return sc.Err()
}

// summarizeCounters is the summary of a run of a join of op, with inputs
// named sides, on a runner whose workers could not write the accounting
// where this process can read it: its Beam counters.
func summarizeCounters(op Op, sides []string, pr beam.PipelineResult) Summary {
	r, _ := routeOf(op)
	sum := Summary{Op: op, Sides: summarySides(sides), Ran: true, Fates: r.fatesInCounters, Counts: map[string]int64{}}
	for _, c := range pr.Metrics().AllMetrics().Counters() {
		if c.Namespace() != join.Namespace {
			continue
		}
		name := c.Name()
		if r.fromCounter != nil {
			name = r.fromCounter(name)
		}
		sum.Counts[name] += c.Result()
	}
	// A line the reader judged late is written as a late record without
	// passing the join, whose counter (late_out) does not see it; the
	// accounting counts it in both, and so does this.
	for _, side := range sum.sides() {
		if n := sum.Counts[side+"_"+countReaderLate]; n > 0 && slices.Contains(r.outCounts, side+"_"+countLateOut) {
			sum.Counts[side+"_"+countLateOut] += n
		}
	}
	return sum
}

// FateColumns are the fates of the elements of a join of op, in the order
// the summary shows them: per side, the records that went to the join are
// each one of these, and Check says so.
func FateColumns(op Op) []string {
	r, _ := routeOf(op)
	return r.fates
}

// String is the summary as the command prints it: a table of the per-side
// counts, then the counts of records written (those named *_out).
//
//	side   read  in   matched  unmatched  expired  evicted  late  invalid
//	left   303   300  262      38         0        0        0     3
//	right  ...
//	pairs_out 290  retractions_out 0  left_unmatched_out 38  ...
//
// The fate columns (FateColumns) are there when the fates were counted;
// then a window join and a cogroup also print the accounting equation of
// each side, after the counts of records written:
//
//	left: in 5 = matched 3 + unmatched 1 + expired 0 + late 1
//
// Per side, the columns are lines read, records that went to the join,
// the records the reader judged late (reader_late, when there are any),
// the fates of those that went to the join, dead letters.
func (s Summary) String() string {
	cols := []string{"read", "in"}
	if slices.ContainsFunc(s.sides(), func(side string) bool { return s.Counts[side+"_"+countReaderLate] > 0 }) {
		cols = append(cols, countReaderLate)
	}
	if s.Fates {
		cols = append(cols, FateColumns(s.Op)...)
	}
	cols = append(cols, "invalid")
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "side\t%s\n", strings.Join(cols, "\t"))
	for _, side := range s.sides() {
		fmt.Fprint(tw, side)
		for _, c := range cols {
			fmt.Fprintf(tw, "\t%d", s.Counts[side+"_"+c])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	rt, _ := routeOf(s.Op)
	rest := slices.Clone(rt.outCounts)
	var other []string
	for name := range s.Counts {
		if strings.HasSuffix(name, "_out") && !slices.Contains(rest, name) {
			other = append(other, name)
		}
	}
	sort.Strings(other)
	for i, name := range append(rest, other...) {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s %d", name, s.Counts[name])
	}
	b.WriteString("\n")
	if s.Fates && !rt.oneLateRecordEach {
		for _, side := range s.sides() {
			b.WriteString(s.equation(side) + "\n")
		}
	}
	return b.String()
}

// equation writes a side's accounting equation: "left: in 5 = matched 3 +
// unmatched 1 + expired 0 + late 1".
func (s Summary) equation(side string) string {
	var terms []string
	for _, f := range FateColumns(s.Op) {
		terms = append(terms, fmt.Sprintf("%s %d", f, s.Counts[side+"_"+f]))
	}
	return fmt.Sprintf("%s: in %d = %s", side, s.Counts[side+"_in"], strings.Join(terms, " + "))
}

// Check reports the inputs that a run did not account for, one error per
// line of its text:
//
//   - a side with lines of which none is valid: the join had nothing to
//     join there, which is never what was meant (a wrong --key or --time
//     is the usual cause); the error says what was wrong with how many
//     lines, and shows the first;
//   - when the fates were counted, a side where the records that went to
//     the join are not each accounted for by exactly one fate, or whose
//     late fates are not the late records written (for window and cogroup,
//     more late fates than late records: a late element missed one window
//     at least).
func (s Summary) Check() error {
	rt, _ := routeOf(s.Op)
	var errs []error
	for _, side := range s.sides() {
		n := func(c string) int64 { return s.Counts[side+"_"+c] }
		if n("read") > 0 && n("in")+n(countReaderLate) == 0 {
			errs = append(errs, s.noValidLine(side))
		}
		if !s.Fates {
			continue
		}
		var fates int64
		var each []string
		for _, f := range FateColumns(s.Op) {
			fates += n(f)
			each = append(each, fmt.Sprintf("%s %d", f, n(f)))
		}
		if fates != n("in") {
			errs = append(errs, fmt.Errorf("beamjoin: %s: %d records went to the join and %d came out of it (%s): %d are unaccounted for",
				side, n("in"), fates, strings.Join(each, ", "), n("in")-fates))
		}
		// The reader's late records are written to the same output.
		if late := n("late") + n(countReaderLate); s.FromRecords && (late != n("late_out") && rt.oneLateRecordEach || late > n("late_out")) {
			judged := fmt.Sprintf("the join judged %d elements late", n("late"))
			if r := n(countReaderLate); r > 0 {
				judged += fmt.Sprintf(" and the reader %d", r)
			}
			errs = append(errs, fmt.Errorf("beamjoin: %s: %s and wrote %d late records", side, judged, n("late_out")))
		}
	}
	return errors.Join(errs...)
}

// noValidLine says why no line of side was valid.
func (s Summary) noValidLine(side string) error {
	read := s.Counts[side+"_read"]
	var why []string
	for _, d := range s.DeadLetters {
		if d.Side != side {
			continue
		}
		if len(why) == 0 {
			why = append(why, fmt.Sprintf("%s in %d of %d lines, e.g. %s:%d: %s", d.Reason, d.N, read, d.Example.File, d.Example.Line, cut(d.Example.Raw, 120)))
		} else {
			why = append(why, fmt.Sprintf("%s in %d", d.Reason, d.N))
		}
	}
	if len(why) == 0 { // counted by counters, without reasons
		why = append(why, fmt.Sprintf("%d of %d lines are dead letters", s.Counts[side+"_invalid"], read))
	}
	return fmt.Errorf("beamjoin: no line of %s is valid: %s", sideWords(side), strings.Join(why, "; "))
}

// InvalidReasons says in a few words why lines were invalid, e.g.
// `left: 2 bad JSON; right: 1 field "ts": missing`, the most common reasons
// first; "" when none were.
func (s Summary) InvalidReasons() string {
	var parts []string
	for _, side := range s.sides() {
		var why []string
		for _, d := range s.DeadLetters {
			if d.Side == side {
				why = append(why, fmt.Sprintf("%d %s", d.N, d.Reason))
			}
		}
		if len(why) > 0 {
			parts = append(parts, side+": "+strings.Join(why, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// sideWords say a side in a sentence: "the left input", "input2".
func sideWords(side string) string {
	if slices.Contains(leftRight, side) {
		return "the " + side + " input"
	}
	return side
}

// cut shortens s to about n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
