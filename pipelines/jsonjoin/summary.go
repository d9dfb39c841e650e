package jsonjoin

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Summary is the beamjoin counters of a run (namespace "beamjoin"), each
// summed over the steps that report it.
type Summary struct {
	Op       Op
	Counters map[string]int64
}

func summarize(op Op, pr beam.PipelineResult) Summary {
	sum := Summary{Op: op, Counters: map[string]int64{}}
	if pr == nil {
		return sum
	}
	for _, c := range pr.Metrics().AllMetrics().Counters() {
		if c.Namespace() == join.Namespace {
			sum.Counters[c.Name()] += c.Result()
		}
	}
	return sum
}

// sideColumns are the per-side counters, in the order the summary shows
// them: lines read, elements that entered the join, their fates, dead
// letters. Those in always are shown even when zero (a counter never
// incremented is not reported at all); the others when reported.
var (
	sideColumns = []string{"read", "in", "matched", "unmatched", "expired", "evicted", "late", "invalid"}
	always      = map[Op][]string{
		Interval: sideColumns,
		Window:   {"read", "invalid"},
		CoGroup:  {"read", "invalid"},
	}
	// outCounters are the counters of records written, in the order shown.
	outCounters = []string{"pairs_out", "retractions_out", "left_unmatched_out", "right_unmatched_out"}
)

// String is the summary as the command prints it: a table of the per-side
// counters, then the counters of records written (those named *_out).
//
//	side   read  in   matched  unmatched  expired  evicted  late  invalid
//	left   303   300  262      38         0        0        0     3
//	right  ...
//	pairs_out 290  left_unmatched_out 38  ...
func (s Summary) String() string {
	var cols []string
	show := map[string]bool{}
	for _, c := range always[s.Op] {
		show[c] = true
	}
	for _, c := range sideColumns {
		if show[c] {
			cols = append(cols, c)
		} else if _, l := s.Counters["left_"+c]; l {
			cols = append(cols, c)
		} else if _, r := s.Counters["right_"+c]; r {
			cols = append(cols, c)
		}
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "side\t%s\n", strings.Join(cols, "\t"))
	for _, side := range []string{"left", "right"} {
		fmt.Fprint(tw, side)
		for _, c := range cols {
			fmt.Fprintf(tw, "\t%d", s.Counters[side+"_"+c])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	var rest []string
	for _, name := range outCounters {
		if _, ok := s.Counters[name]; ok || s.Op == Interval {
			rest = append(rest, name)
		}
	}
	var other []string
	for name := range s.Counters {
		if strings.HasSuffix(name, "_out") && !slices.Contains(outCounters, name) {
			other = append(other, name)
		}
	}
	sort.Strings(other)
	rest = append(rest, other...)
	for i, name := range rest {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s %d", name, s.Counters[name])
	}
	if len(rest) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// Check reports counters of an interval join that do not add up: per
// side, lines read less dead letters must equal elements in, and elements
// in must equal the sum of their fates (matched, unmatched, expired,
// evicted, late). Other operations have nothing to check.
//
// A mismatch after a successful run is a fault of the counting, not of the
// join, whose records are checked by tests; the known cause is Prism 2.77
// losing a counter's first reports when two bundles send them at once.
func (s Summary) Check() error {
	if s.Op != Interval {
		return nil
	}
	n := s.Counters
	var bad []string
	for _, side := range []string{"left", "right"} {
		valid := n[side+"_read"] - n[side+"_invalid"]
		fates := n[side+"_matched"] + n[side+"_unmatched"] + n[side+"_expired"] + n[side+"_evicted"] + n[side+"_late"]
		if valid != n[side+"_in"] || fates != valid {
			bad = append(bad, fmt.Sprintf("%s: %d valid lines, %d in, %d fates", side, valid, n[side+"_in"], fates))
		}
	}
	if bad == nil {
		return nil
	}
	return fmt.Errorf("beamjoin: the counters do not add up (%s)", strings.Join(bad, "; "))
}
