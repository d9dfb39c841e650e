package join_test

// Late data in Window and CoGroup: TestStream inputs whose watermark passes
// a window before some of its elements arrive, on fixed, sliding and
// session windows, with and without allowed lateness. Each test checks the
// exact records of both routes, the late elements, the fates, and that
// every input element is accounted for exactly once, from the records.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function2x1(describeWindowLate)
	register.Function2x1(describeFate)
}

// describeWindowLate writes a late element as "side key value@time
// missed window", e.g. "right a r2@5s missed [0s,10s)", with a complaint if
// its sides or timestamp are wrong.
func describeWindowLate(et beam.EventTime, l join.WindowLateElement[string, string, note]) string {
	value := "-"
	switch {
	case l.Side == join.Left && l.Left != nil && l.Right == nil:
		value = *l.Left
	case l.Side == join.Right && l.Right != nil && l.Left == nil:
		value = l.Right.Text
	}
	line := fmt.Sprintf("%s %s %s@%s missed %s", l.Side, l.Key, value, since(l.Time), bounds(l.WindowStart, l.WindowEnd))
	if !et.ToTime().Equal(l.Time) {
		line += fmt.Sprintf(" (BAD TIME: element timestamp %s)", since(et.ToTime()))
	}
	return line
}

// describeFate writes a fate as "side key time outcome", e.g. "left a 1s
// matched"; the tests' elements have distinct times per side.
func describeFate(et beam.EventTime, f join.Fate[string]) string {
	line := fmt.Sprintf("%s %s %s %s", f.Side, f.Key, since(f.Time), f.Outcome)
	if !et.ToTime().Equal(f.Time) {
		line += fmt.Sprintf(" (BAD TIME: element timestamp %s)", since(et.ToTime()))
	}
	return line
}

// lateCase is a stream with late elements, and what both routes make of
// it: Window (FullOuter, so that every element not late is in a record)
// and CoGroup.
type lateCase struct {
	name   string
	events func(c *teststream.Config)
	opts   []join.Option
	// inputs are every element the stream adds, as "side key value@time".
	inputs               []string
	pairs, groups, late  []string
	windowFates, coFates []string
}

func TestWindowAndCoGroupAccountForLateElements(t *testing.T) {
	fixed := window.NewFixedWindows(10 * time.Second)
	for _, c := range []lateCase{
		{
			// [0s,10s) fires for a and b at 10 s; r2 then arrives for it on
			// a, whose firing proves the window gone.
			name: "fixed",
			events: func(c *teststream.Config) {
				must(c.AdvanceWatermark(0))
				must(c.AddElements(1000, leftAt("a", 1*time.Second, "l1"), rightAt("a", 3*time.Second, "r1"), leftAt("b", 2*time.Second, "l3")))
				must(c.AdvanceWatermark(11_000))
				must(c.AddElements(5000, rightAt("a", 5*time.Second, "r2")))
				must(c.AddElements(12_000, leftAt("a", 12*time.Second, "l2")))
				must(c.AdvanceWatermarkToInfinity())
			},
			opts:   []join.Option{join.WindowInto(fixed)},
			inputs: []string{"left a l1@1s", "right a r1@3s", "left b l3@2s", "right a r2@5s", "left a l2@12s"},
			pairs: []string{
				"pair a [0s,10s) l1@1s r1@3s",
				"unmatched a [10s,20s) l2@12s -",
				"unmatched b [0s,10s) l3@2s -",
			},
			groups: []string{
				"a [0s,10s) [l1] [r1]",
				"a [10s,20s) [l2] []",
				"b [0s,10s) [l3] []",
			},
			late:        []string{"right a r2@5s missed [0s,10s)"},
			windowFates: []string{"left a 12s unmatched", "left a 1s matched", "left b 2s unmatched", "right a 3s matched", "right a 5s late"},
			coFates:     []string{"left a 12s grouped", "left a 1s grouped", "left b 2s grouped", "right a 3s grouped", "right a 5s late"},
		},
		{
			// 10 s windows every 5 s. [0s,10s) fires at 10 s; r2 at 7 s
			// misses it but is still in [5s,15s), where it joins; r3 at 2 s
			// misses both its windows.
			name: "sliding",
			events: func(c *teststream.Config) {
				must(c.AdvanceWatermark(0))
				must(c.AddElements(6000, leftAt("a", 6*time.Second, "l1"), rightAt("a", 8*time.Second, "r1")))
				must(c.AdvanceWatermark(11_000))
				must(c.AddElements(7000, rightAt("a", 7*time.Second, "r2")))
				must(c.AddElements(2000, rightAt("a", 2*time.Second, "r3")))
				must(c.AdvanceWatermarkToInfinity())
			},
			opts:   []join.Option{join.WindowInto(window.NewSlidingWindows(5*time.Second, 10*time.Second))},
			inputs: []string{"left a l1@6s", "right a r1@8s", "right a r2@7s", "right a r3@2s"},
			pairs: []string{
				"pair a [0s,10s) l1@6s r1@8s",
				"pair a [5s,15s) l1@6s r1@8s",
				"pair a [5s,15s) l1@6s r2@7s",
			},
			groups: []string{
				"a [0s,10s) [l1] [r1]",
				"a [5s,15s) [l1] [r1 r2]",
			},
			late: []string{
				"right a r2@7s missed [0s,10s)",
				"right a r3@2s missed [-5s,5s)",
				"right a r3@2s missed [0s,10s)",
			},
			windowFates: []string{"left a 6s matched", "right a 2s late", "right a 7s matched", "right a 8s matched"},
			coFates:     []string{"left a 6s grouped", "right a 2s late", "right a 7s grouped", "right a 8s grouped"},
		},
		{
			// Sessions of a 5 s gap: [1s,8s) fires at 8 s. r2's own session
			// [2s,7s) had expired: late. l2's [6s,11s) had not; the fired
			// session's values are gone, so it starts a session of its own.
			name: "sessions",
			events: func(c *teststream.Config) {
				must(c.AdvanceWatermark(0))
				must(c.AddElements(1000, leftAt("a", 1*time.Second, "l1"), rightAt("a", 3*time.Second, "r1")))
				must(c.AdvanceWatermark(9000))
				must(c.AddElements(2000, rightAt("a", 2*time.Second, "r2")))
				must(c.AddElements(6000, leftAt("a", 6*time.Second, "l2")))
				must(c.AdvanceWatermarkToInfinity())
			},
			opts:   []join.Option{join.WindowInto(window.NewSessions(5 * time.Second))},
			inputs: []string{"left a l1@1s", "right a r1@3s", "right a r2@2s", "left a l2@6s"},
			pairs: []string{
				"pair a [1s,8s) l1@1s r1@3s",
				"unmatched a [6s,11s) l2@6s -",
			},
			groups: []string{
				"a [1s,8s) [l1] [r1]",
				"a [6s,11s) [l2] []",
			},
			late:        []string{"right a r2@2s missed [2s,7s)"},
			windowFates: []string{"left a 1s matched", "left a 6s unmatched", "right a 2s late", "right a 3s matched"},
			coFates:     []string{"left a 1s grouped", "left a 6s grouped", "right a 2s late", "right a 3s grouped"},
		},
		{
			// AllowedLateness(5s): [0s,10s) fires at 10 s with l1 alone; r1
			// arrives late but allowed and adds a late pane: Window's pair
			// of r1 with l1, CoGroup's Group of the new value r1. The window
			// expires at 15 s; r2 after that is late.
			name: "fixed_allowed_lateness",
			events: func(c *teststream.Config) {
				must(c.AdvanceWatermark(0))
				must(c.AddElements(1000, leftAt("a", 1*time.Second, "l1")))
				must(c.AdvanceWatermark(11_000))
				must(c.AddElements(4000, rightAt("a", 4*time.Second, "r1")))
				must(c.AdvanceWatermark(16_000))
				must(c.AddElements(5000, rightAt("a", 5*time.Second, "r2")))
				must(c.AdvanceWatermarkToInfinity())
			},
			opts:   []join.Option{join.WindowInto(fixed), join.AllowedLateness(5 * time.Second)},
			inputs: []string{"left a l1@1s", "right a r1@4s", "right a r2@5s"},
			pairs: []string{
				"pair a [0s,10s) l1@1s r1@4s",
				"unmatched a [0s,10s) l1@1s -",
			},
			groups: []string{
				"a [0s,10s) [l1] []",
				"a [0s,10s) [] [r1]",
			},
			late:        []string{"right a r2@5s missed [0s,10s)"},
			windowFates: []string{"left a 1s matched", "right a 4s matched", "right a 5s late"},
			coFates:     []string{"left a 1s grouped", "right a 4s grouped", "right a 5s late"},
		},
	} {
		t.Run(c.name, func(t *testing.T) { testLate(t, c) })
	}
}

func testLate(t *testing.T, c lateCase) {
	cfg := teststream.NewConfig()
	c.events(&cfg)
	p, s := beam.NewPipelineWithRoot()
	left, right := beam.ParDo2(s, splitTimed, teststream.Create(s, cfg))
	extra := []join.Option{join.ReportLate(), join.TrackFates()}
	w := join.Window[string, string, note](s.Scope("window"), left, right, append([]join.Option{join.FullOuter}, append(extra, c.opts...)...)...)
	g := join.CoGroup[string, string, note](s.Scope("cogroup"), left, right, append(extra, c.opts...)...)
	results, wLate, wFates := w.Records, w.Late, w.Fates
	groups, gLate, gFates := g.Records, g.Late, g.Fates
	got := map[string]func() []string{
		"Window records":  gather(s, beam.ParDo(s, describeWindowResult, results)),
		"Window late":     gather(s, beam.ParDo(s, describeWindowLate, wLate)),
		"Window fates":    gather(s, beam.ParDo(s, describeFate, wFates)),
		"CoGroup records": gather(s, beam.ParDo(s, describeGroup, groups)),
		"CoGroup late":    gather(s, beam.ParDo(s, describeWindowLate, gLate)),
		"CoGroup fates":   gather(s, beam.ParDo(s, describeFate, gFates)),
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		what string
		want []string
	}{
		{"Window records", c.pairs},
		{"Window late", c.late},
		{"Window fates", c.windowFates},
		{"CoGroup records", c.groups},
		{"CoGroup late", c.late},
		{"CoGroup fates", c.coFates},
	} {
		if diff := cmp.Diff(sortedList(w.want), got[w.what]()); diff != "" {
			t.Errorf("%s differ (-want +got):\n%s", w.what, diff)
		}
	}
	// The accounting, from the records alone: every input element is in a
	// pair or group, or else in an unmatched record, or else only in the
	// late output, exactly one of these; and that is its fate.
	windowAccount := accountFromRecords(c.inputs, got["Window records"](), got["Window late"](), "matched", "unmatched")
	if diff := cmp.Diff(sortedList(c.windowFates), windowAccount); diff != "" {
		t.Errorf("Window: the accounting from the records differs from the fates (-fates +records):\n%s", diff)
	}
	coAccount := accountFromRecords(c.inputs, groupsAsRecords(got["CoGroup records"]()), got["CoGroup late"](), "grouped", "")
	if diff := cmp.Diff(sortedList(c.coFates), coAccount); diff != "" {
		t.Errorf("CoGroup: the accounting from the records differs from the fates (-fates +records):\n%s", diff)
	}
	for _, route := range []string{"Window", "CoGroup"} {
		if err := checkEquation(c.inputs, got[route+" fates"]()); err != nil {
			t.Errorf("%s: %v", route, err)
		}
	}
}

// accountFromRecords says what became of each input ("side key value@time")
// judging by the records written ("pair a [0s,10s) l1@1s r1@3s"; an
// "unmatched" record names one value) and the late records: "side key time
// outcome", as describeFate writes fates, with outcome paired if it is in a
// pair, else unmatched if it is in a record, else late if it is in the late
// output, else "LOST".
func accountFromRecords(inputs, records, late []string, paired, unmatched string) []string {
	inPair, inRecord, isLate := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, r := range records {
		f := strings.Fields(r)
		for _, v := range f[3:5] {
			if v == "-" {
				continue
			}
			inRecord[valueName(v)] = true
			if f[0] == "pair" {
				inPair[valueName(v)] = true
			}
		}
	}
	for _, l := range late {
		isLate[valueName(strings.Fields(l)[2])] = true
	}
	var out []string
	for _, in := range inputs {
		f := strings.Fields(in) // side key value@time
		name, at, _ := strings.Cut(f[2], "@")
		outcome := "LOST"
		switch {
		case inPair[name]:
			outcome = paired
		case inRecord[name] && unmatched != "":
			outcome = unmatched
		case isLate[name]:
			outcome = "late"
		}
		out = append(out, strings.Join([]string{f[0], f[1], at, outcome}, " "))
	}
	slices.Sort(out)
	return out
}

// valueName is a value without its time: "l1" of "l1@1s".
func valueName(v string) string {
	name, _, _ := strings.Cut(v, "@")
	return name
}

// groupsAsRecords writes Groups ("a [0s,10s) [l1] [r1 r2]") as records
// that pair every value of the group ("pair a [0s,10s) l1 r1"), so that
// accountFromRecords counts its values as grouped. Times are not in a
// Group's description; the values' names are unique in these tests, so
// they are matched by name.
func groupsAsRecords(groups []string) []string {
	var out []string
	for _, g := range groups {
		_, rest, _ := strings.Cut(g, " [")
		_, rest, _ = strings.Cut(rest, " ")
		vals := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(rest))
		for _, v := range vals {
			out = append(out, "pair k w "+v+" -")
		}
	}
	return out
}

// checkEquation checks per side: in = the sum of the outcomes, with one
// fate for each input element.
func checkEquation(inputs, fates []string) error {
	in, out := map[string]int{}, map[string]int{}
	for _, i := range inputs {
		in[strings.Fields(i)[0]]++
	}
	for _, f := range fates {
		out[strings.Fields(f)[0]]++
	}
	for _, side := range []string{"left", "right"} {
		if in[side] != out[side] {
			return fmt.Errorf("%s: %d elements in, %d fates out", side, in[side], out[side])
		}
	}
	return nil
}
