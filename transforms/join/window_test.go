package join_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function3x1(describeWindowResult)
	register.Function2x1(describeWindowResultTime)
}

// describeWindowResult writes a record as "kind key window left right",
// e.g. "pair a [0s,10s) l1@1s r1@3s", with "-" for an absent side. It adds
// a complaint to the line if the record breaks an invariant that every
// record must keep, so that the tests' exact comparisons check them too:
// among them, that the record is in the window it names (w).
func describeWindowResult(w beam.Window, et beam.EventTime, r join.WindowResult[string, string, note]) string {
	left, right := "-", "-"
	if r.Left != nil {
		left = *r.Left + "@" + since(r.LeftTime)
	}
	if r.Right != nil {
		right = r.Right.Text + "@" + since(r.RightTime)
	}
	line := fmt.Sprintf("%v %s %s %s %s", r.Kind, r.Key, windowName(r.WindowStart, r.WindowEnd), left, right)
	if want := r.WindowEnd.Add(-time.Millisecond); !r.Time.Equal(want) || !et.ToTime().Equal(want) {
		line += fmt.Sprintf(" (BAD TIME: Time %s, element timestamp %s, want the window's max timestamp %s)", since(r.Time), since(et.ToTime()), since(want))
	}
	if (r.Left == nil) != r.LeftTime.IsZero() || (r.Right == nil) != r.RightTime.IsZero() {
		line += " (BAD: a side's value and time disagree on whether it is present)"
	}
	if (r.Kind == join.KindPair) != (r.Left != nil && r.Right != nil) {
		line += " (BAD: kind and sides disagree)"
	}
	return line + windowComplaint(w, r.WindowStart, r.WindowEnd)
}

// describeWindowResultTime writes only a record's key, its Time and its
// element timestamp.
func describeWindowResultTime(et beam.EventTime, r join.WindowResult[string, string, note]) string {
	return fmt.Sprintf("%s Time=%s timestamp=%s", r.Key, since(r.Time), since(et.ToTime()))
}

// windowName writes a window's bounds, "[10s,20s)", or "global".
func windowName(start, end time.Time) string {
	if start.Equal(mtime.MinTimestamp.ToTime()) && end.Equal(mtime.EndOfGlobalWindowTime.ToTime().Add(time.Millisecond)) {
		return "global"
	}
	return bounds(start, end)
}

// The test inputs. Each is small enough to join by hand; the expected
// outputs below are those hand joins.
var (
	// tumbling, in 10 s windows: key a has values on both sides in
	// [0s,10s) and only a left one in [10s,20s); b has two left values
	// in [0s,10s) and a right one in [10s,20s); c's left value at exactly
	// 10 s is in [10s,20s), with r4, not in [0s,10s) with r5; d is only on
	// the left, e only on the right.
	tumbling = []timed{
		leftAt("a", 1*time.Second, "l1"),
		leftAt("a", 12*time.Second, "l2"),
		leftAt("b", 5*time.Second, "l3"),
		leftAt("b", 6*time.Second, "l6"),
		leftAt("c", 10*time.Second, "l4"),
		leftAt("d", 3*time.Second, "l5"),
		rightAt("a", 3*time.Second, "r1"),
		rightAt("a", 8*time.Second, "r2"),
		rightAt("b", 15*time.Second, "r3"),
		rightAt("c", 19*time.Second, "r4"),
		rightAt("c", 9*time.Second, "r5"),
		rightAt("e", 7*time.Second, "r6"),
	}
	fixed10s = window.NewFixedWindows(10 * time.Second)

	// sliding, in 10 s windows every 5 s: l1 and r1 share [0s,10s) and
	// [5s,15s); r2 is in [5s,15s) with l1 and alone in [10s,20s); l2 is
	// alone in both its windows.
	sliding = []timed{
		leftAt("a", 6*time.Second, "l1"),
		leftAt("b", 1*time.Second, "l2"),
		rightAt("a", 8*time.Second, "r1"),
		rightAt("a", 12*time.Second, "r2"),
	}
	sliding10sEvery5s = window.NewSlidingWindows(5*time.Second, 10*time.Second)

	// sessions, with a 5 s gap: on key a, l1 and l2 are 7 s apart but r1
	// between them joins them into one session [0s,12s), so sessions merge
	// across the two inputs; r2 is a session of its own. b's values are
	// 9 s apart: two sessions.
	sessions = []timed{
		leftAt("a", 0, "l1"),
		leftAt("a", 7*time.Second, "l2"),
		leftAt("b", 1*time.Second, "l3"),
		rightAt("a", 3*time.Second, "r1"),
		rightAt("a", 20*time.Second, "r2"),
		rightAt("b", 10*time.Second, "r3"),
	}
	sessions5s = window.NewSessions(5 * time.Second)
)

func TestWindow(t *testing.T) {
	tumblingPairs := []string{
		"pair a [0s,10s) l1@1s r1@3s",
		"pair a [0s,10s) l1@1s r2@8s",
		"pair c [10s,20s) l4@10s r4@19s",
	}
	tumblingLeftOnly := []string{
		"unmatched a [10s,20s) l2@12s -",
		"unmatched b [0s,10s) l3@5s -",
		"unmatched b [0s,10s) l6@6s -",
		"unmatched d [0s,10s) l5@3s -",
	}
	tumblingRightOnly := []string{
		"unmatched b [10s,20s) - r3@15s",
		"unmatched c [0s,10s) - r5@9s",
		"unmatched e [0s,10s) - r6@7s",
	}
	tests := []struct {
		name     string
		elements []timed
		// windowFn, if set, windows the inputs before the join is added, as
		// a caller would with beam.WindowInto.
		windowFn *window.Fn
		opts     []join.Option
		want     []string
	}{
		{
			name:     "inner_by_default_emits_each_pair_of_a_key_and_window",
			elements: tumbling,
			opts:     []join.Option{join.WindowInto(fixed10s)},
			want:     tumblingPairs,
		},
		{
			name:     "left_outer_adds_each_left_value_whose_window_has_no_right_value",
			elements: tumbling,
			opts:     []join.Option{join.WindowInto(fixed10s), join.LeftOuter},
			want:     concat(tumblingPairs, tumblingLeftOnly),
		},
		{
			name:     "right_outer_adds_each_right_value_whose_window_has_no_left_value",
			elements: tumbling,
			opts:     []join.Option{join.RightOuter, join.WindowInto(fixed10s)},
			want:     concat(tumblingPairs, tumblingRightOnly),
		},
		{
			name:     "full_outer_adds_both",
			elements: tumbling,
			opts:     []join.Option{join.WindowInto(fixed10s), join.FullOuter},
			want:     concat(tumblingPairs, tumblingLeftOnly, tumblingRightOnly),
		},
		{
			name:     "inputs_windowed_by_the_caller_join_in_their_windows",
			elements: tumbling,
			windowFn: fixed10s,
			opts:     []join.Option{join.Inner},
			want:     tumblingPairs,
		},
		{
			name:     "unwindowed_inputs_join_per_key_in_the_global_window",
			elements: tumbling,
			want: []string{
				"pair a global l1@1s r1@3s",
				"pair a global l1@1s r2@8s",
				"pair a global l2@12s r1@3s",
				"pair a global l2@12s r2@8s",
				"pair b global l3@5s r3@15s",
				"pair b global l6@6s r3@15s",
				"pair c global l4@10s r4@19s",
				"pair c global l4@10s r5@9s",
			},
		},
		{
			name:     "sliding_windows_repeat_a_pair_and_an_unmatched_value_in_each_window_they_are_in",
			elements: sliding,
			opts:     []join.Option{join.WindowInto(sliding10sEvery5s), join.FullOuter},
			want: []string{
				"pair a [0s,10s) l1@6s r1@8s",
				"pair a [5s,15s) l1@6s r1@8s",
				"pair a [5s,15s) l1@6s r2@12s",
				"unmatched a [10s,20s) - r2@12s",
				"unmatched b [-5s,5s) l2@1s -",
				"unmatched b [0s,10s) l2@1s -",
			},
		},
		{
			name:     "session_windows_merge_across_both_inputs",
			elements: sessions,
			opts:     []join.Option{join.WindowInto(sessions5s), join.FullOuter},
			want: []string{
				"pair a [0s,12s) l1@0s r1@3s",
				"pair a [0s,12s) l2@7s r1@3s",
				"unmatched a [20s,25s) - r2@20s",
				"unmatched b [1s,6s) l3@1s -",
				"unmatched b [10s,15s) - r3@10s",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := windowedInputs(s, tt.elements, tt.windowFn)
			results := join.Window[string, string, note](s, left, right, tt.opts...).Records
			got := gather(s, beam.ParDo(s, describeWindowResult, results))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedList(tt.want), got()); diff != "" {
				t.Errorf("join.Window records differ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWindowTimestampsRecordsAtTheWindowMaxTimestamp checks the element
// timestamps themselves, which describeWindowResult only compares with Time.
func TestWindowTimestampsRecordsAtTheWindowMaxTimestamp(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := timedInputs(s, tumbling)
	results := join.Window[string, string, note](s, left, right, join.WindowInto(fixed10s), join.FullOuter).Records
	got := gather(s, beam.ParDo(s, describeWindowResultTime, results))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a Time=9.999s timestamp=9.999s",
		"a Time=9.999s timestamp=9.999s",
		"a Time=19.999s timestamp=19.999s",
		"b Time=9.999s timestamp=9.999s",
		"b Time=9.999s timestamp=9.999s",
		"b Time=19.999s timestamp=19.999s",
		"c Time=9.999s timestamp=9.999s",
		"c Time=19.999s timestamp=19.999s",
		"d Time=9.999s timestamp=9.999s",
		"e Time=9.999s timestamp=9.999s",
	}
	if diff := cmp.Diff(sortedList(want), got()); diff != "" {
		t.Errorf("join.Window timestamps differ (-want +got):\n%s", diff)
	}
}

func concat(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

func init() {
	register.Function2x2(keyByLength)
}

// keyByLength re-keys a right input by an int, for inputs whose key types
// differ.
func keyByLength(k string, v note) (int, note) { return len(k), v }

func TestMisuse(t *testing.T) {
	type build func(s beam.Scope, left, right beam.PCollection) error
	zeroSize, negativeGap := window.NewFixedWindows(0), window.NewSessions(-time.Minute)
	subMillisecond := window.NewSlidingWindows(1500*time.Microsecond, time.Second)
	// agree returns err, or an error saying how check's error differs: the
	// Check functions must say what the transforms say of the options.
	agree := func(err, check error) error {
		if fmt.Sprint(err) != fmt.Sprint(check) {
			return fmt.Errorf("the Check function says %v, the transform %v", check, err)
		}
		return err
	}
	window := func(opts ...join.Option) build {
		return func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryWindow[string, string, note](s, left, right, opts...)
			return agree(err, join.RouteWindow.Check(opts...))
		}
	}
	coGroup := func(opts ...join.Option) build {
		return func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryCoGroup[string, string, note](s, left, right, opts...)
			return agree(err, join.RouteCoGroup.Check(opts...))
		}
	}
	tests := []struct {
		name  string
		build build
		want  string
	}{
		{"window_rejects_Between", window(join.Between(0, time.Second)),
			"beamjoin: join.Window does not take Between"},
		{"window_rejects_LowerExclusive", window(join.LowerExclusive()),
			"beamjoin: join.Window does not take LowerExclusive"},
		{"window_rejects_UpperExclusive", window(join.UpperExclusive()),
			"beamjoin: join.Window does not take UpperExclusive"},
		{"window_rejects_an_emission_mode", window(join.LeftOuter, join.EmitFinal),
			"beamjoin: join.Window does not take an emission mode"},
		{"window_rejects_a_negative_AllowedLateness", window(join.AllowedLateness(-time.Second)),
			"beamjoin: join.Window: allowed lateness -1s is negative"},
		{"cogroup_rejects_an_AllowedLateness_finer_than_event_time", coGroup(join.AllowedLateness(time.Microsecond)),
			"beamjoin: join.CoGroup: allowed lateness 1µs is finer than a millisecond, the precision of event time"},
		{"window_rejects_MaxBufferedPerKey", window(join.MaxBufferedPerKey(10)),
			"beamjoin: join.Window does not take MaxBufferedPerKey"},
		{"window_rejects_CleanupEvery", window(join.CleanupEvery(time.Second)),
			"beamjoin: join.Window does not take CleanupEvery"},
		{"window_rejects_a_nil_option", window(join.Inner, nil),
			"beamjoin: join.Window: option 1 is nil"},
		{"window_rejects_WindowInto_nil", window(join.WindowInto(nil)),
			"beamjoin: join.Window: WindowInto(nil): pass a window.Fn such as window.NewFixedWindows(time.Minute)"},
		{"window_rejects_an_unknown_join_type", window(join.Type(9)),
			"beamjoin: join.Window: unknown join type Type(9)"},
		{"window_rejects_a_zero_size", window(join.WindowInto(zeroSize)),
			"beamjoin: join.Window: WindowInto(window.NewFixedWindows(0s)): the size 0s is not positive"},
		{"cogroup_rejects_a_negative_gap", coGroup(join.WindowInto(negativeGap)),
			"beamjoin: join.CoGroup: WindowInto(window.NewSessions(-1m0s)): the gap -1m0s is not positive"},
		{"cogroup_rejects_a_sub_millisecond_period", coGroup(join.WindowInto(subMillisecond)),
			"beamjoin: join.CoGroup: WindowInto(window.NewSlidingWindows(1.5ms, 1s)): the period 1.5ms is finer than a millisecond, the precision of event time"},
		{"cogroup_rejects_a_join_type", coGroup(join.LeftOuter),
			"beamjoin: join.CoGroup does not take a join type"},
		{"cogroup_rejects_Between", coGroup(join.WindowInto(fixed10s), join.Between(0, time.Second)),
			"beamjoin: join.CoGroup does not take Between"},
		{
			name: "left_input_must_be_keyed",
			build: func(s beam.Scope, _, right beam.PCollection) error {
				_, err := join.TryWindow[string, string, note](s, beam.Create(s, "x"), right)
				return err
			},
			want: "beamjoin: join.Window: the left input is a PCollection<string>, want a PCollection<KV<key, value>>",
		},
		{
			name: "right_input_must_be_keyed",
			build: func(s beam.Scope, left, _ beam.PCollection) error {
				_, err := join.TryCoGroup[string, string, note](s, left, beam.Create(s, note{}))
				return err
			},
			want: "beamjoin: join.CoGroup: the right input is a PCollection<join_test.note>, want a PCollection<KV<key, value>>",
		},
		{
			name: "inputs_must_be_valid_pcollections",
			build: func(s beam.Scope, left, _ beam.PCollection) error {
				_, err := join.TryConnect[string, string, note](s, left, beam.PCollection{})
				return err
			},
			want: "beamjoin: join.Connect: the right input is not a valid PCollection",
		},
		{
			name: "key_types_must_agree",
			build: func(s beam.Scope, left, right beam.PCollection) error {
				_, err := join.TryConnect[string, string, note](s, left, beam.ParDo(s, keyByLength, right))
				return err
			},
			want: "beamjoin: join.Connect: the left key type string differs from the right key type int",
		},
		{
			name: "type_argument_K_must_be_the_key_type",
			build: func(s beam.Scope, left, right beam.PCollection) error {
				_, err := join.TryWindow[int, string, note](s, left, right)
				return err
			},
			want: "beamjoin: join.Window: type argument K is int, but the inputs' key type is string",
		},
		{
			name: "type_argument_L_must_be_the_left_value_type",
			build: func(s beam.Scope, left, right beam.PCollection) error {
				_, err := join.TryCoGroup[string, note, note](s, left, right)
				return err
			},
			want: "beamjoin: join.CoGroup: type argument L is join_test.note, but the left value type is string",
		},
		{
			name: "type_argument_R_must_be_the_right_value_type",
			build: func(s beam.Scope, left, right beam.PCollection) error {
				_, err := join.TryConnect[string, string, string](s, left, right)
				return err
			},
			want: "beamjoin: join.Connect: type argument R is string, but the right value type is join_test.note",
		},
		{
			name: "inputs_must_be_windowed_alike",
			build: func(s beam.Scope, left, right beam.PCollection) error {
				_, err := join.TryWindow[string, string, note](s, beam.WindowInto(s, fixed10s, left), right)
				return err
			},
			want: "beamjoin: join.Window: the left input is windowed by window.NewFixedWindows(10s) and the right by window.NewGlobalWindows(): " +
				"window both alike with beam.WindowInto, or pass join.WindowInto",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			left, right := timedInputs(s, sliding)
			err := tt.build(s, left, right)
			if err == nil {
				t.Fatalf("got no error, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got error\n\t%s\nwant\n\t%s", got, tt.want)
			}
		})
	}
}

// TestMisusePanics checks that the variants without an error panic with
// the error their Try variants return.
func TestMisusePanics(t *testing.T) {
	tests := []struct {
		name string
		add  func(s beam.Scope, left, right beam.PCollection)
		want string
	}{
		{
			name: "window",
			add: func(s beam.Scope, left, right beam.PCollection) {
				join.Window[string, string, note](s, left, right, join.Between(0, time.Second))
			},
			want: "beamjoin: join.Window does not take Between",
		},
		{
			name: "cogroup",
			add: func(s beam.Scope, left, right beam.PCollection) {
				join.CoGroup[string, string, note](s, left, right, join.LeftOuter)
			},
			want: "beamjoin: join.CoGroup does not take a join type",
		},
		{
			name: "connect",
			add: func(s beam.Scope, left, right beam.PCollection) {
				join.Connect[int, string, note](s, left, right)
			},
			want: "beamjoin: join.Connect: type argument K is int, but the inputs' key type is string",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			left, right := timedInputs(s, sliding)
			defer func() {
				r := recover()
				if err, ok := r.(error); !ok || err.Error() != tt.want {
					t.Errorf("panicked with %v, want the error %q", r, tt.want)
				}
			}()
			tt.add(s, left, right)
		})
	}
}

func init() {
	register.Function2x2(noteText)
	register.Function1x1(describeStringResult)
	register.Function1x1(describeStringGroup)
	register.Function2x1(describeStringTagged)
}

func noteText(k string, v note) (string, string) { return k, v.Text }

func describeStringResult(r join.WindowResult[string, string, string]) string {
	left, right := "-", "-"
	if r.Left != nil {
		left = *r.Left
	}
	if r.Right != nil {
		right = *r.Right
	}
	return fmt.Sprintf("%v %s %s %s", r.Kind, r.Key, left, right)
}

func describeStringGroup(g join.Group[string, string, string]) string {
	return fmt.Sprintf("%s %s %s", g.Key, sortedJoin(g.Left), sortedJoin(g.Right))
}

func describeStringTagged(k string, v join.Tagged[string, string]) string {
	value := "?"
	switch {
	case v.Side == join.Left && v.Left != nil && v.Right == nil:
		value = *v.Left
	case v.Side == join.Right && v.Right != nil && v.Left == nil:
		value = *v.Right
	}
	return fmt.Sprintf("%s %v %s", k, v.Side, value)
}

// TestSameValueTypeOnBothSides checks that the side, not the type, says
// where a value came from when both inputs have the same value type.
func TestSameValueTypeOnBothSides(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, notes := timedInputs(s, sliding)
	right := beam.ParDo(s, noteText, notes)
	results := gather(s, beam.ParDo(s, describeStringResult, join.Window[string, string, string](s, left, right, join.FullOuter).Records))
	groups := gather(s, beam.ParDo(s, describeStringGroup, join.CoGroup[string, string, string](s, left, right).Records))
	tagged := gather(s, beam.ParDo(s, describeStringTagged, join.Connect[string, string, string](s, left, right)))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		transform string
		got       []string
		want      []string
	}{
		{"join.Window", results(), []string{"pair a l1 r1", "pair a l1 r2", "unmatched b l2 -"}},
		{"join.CoGroup", groups(), []string{"a [l1] [r1 r2]", "b [l2] []"}},
		{"join.Connect", tagged(), []string{"a left l1", "a right r1", "a right r2", "b left l2"}},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s output differs (-want +got):\n%s", c.transform, diff)
		}
	}
}

// TestWindowOnAStream checks that a window fires once, when the watermark
// passes its end, and that an element arriving behind the watermark after
// its window fired is in no record: it is late (window_late_test.go checks
// where it goes).
func TestWindowOnAStream(t *testing.T) {
	c := teststream.NewConfig()
	must(c.AdvanceWatermark(0))
	must(c.AddElements(1000, leftAt("a", 1*time.Second, "l1")))
	must(c.AddElements(3000, rightAt("a", 3*time.Second, "r1")))
	must(c.AdvanceWatermark(11_000))                             // [0s,10s) fires
	must(c.AddElements(5000, rightAt("a", 5*time.Second, "r2"))) // behind the watermark: late
	must(c.AddElements(12_000, leftAt("a", 12*time.Second, "l2")))
	must(c.AdvanceWatermarkToInfinity())

	p, s := beam.NewPipelineWithRoot()
	left, right := beam.ParDo2(s, splitTimed, teststream.Create(s, c))
	results := join.Window[string, string, note](s, left, right, join.WindowInto(fixed10s), join.FullOuter).Records
	got := gather(s, beam.ParDo(s, describeWindowResult, results))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pair a [0s,10s) l1@1s r1@3s",
		"unmatched a [10s,20s) l2@12s -",
	}
	if diff := cmp.Diff(want, got()); diff != "" {
		t.Errorf("join.Window records differ (-want +got):\n%s", diff)
	}
}

func init() {
	register.Function1x1(windowResultKey)
	register.Function3x1(describeCount)
}

// windowResultKey is the key of a record, for counting records per key.
func windowResultKey(r join.WindowResult[string, string, note]) string { return r.Key }

// describeCount writes a count per key and window, "a [5s,15s) 12", with
// the window the count was made in, not one a record names.
func describeCount(w beam.Window, key string, n int) string {
	name := fmt.Sprint(w)
	if iw, ok := w.(window.IntervalWindow); ok {
		name = bounds(iw.Start.ToTime(), iw.End.ToTime())
	}
	return fmt.Sprintf("%s %s %d", key, name, n)
}

// TestSlidingWindowPairsCountedDownstream checks that each pair of a
// sliding window join is in the sliding window it was made in, as Beam's
// windows are seen downstream: pairs counted per key by stats.Count (a
// GroupByKey in the records' own windows) equal the counts of pairs per
// key and sliding window computed here from the input, on both paths.
func TestSlidingWindowPairsCountedDownstream(t *testing.T) {
	const size, period = 10 * time.Second, 5 * time.Second
	rng := rand.New(rand.NewPCG(26, 3))
	var elements []timed
	for i := range 80 {
		key := string(rune('a' + rng.IntN(3)))
		at := time.Duration(rng.Int64N(40_000)) * time.Millisecond
		if rng.IntN(2) == 0 {
			elements = append(elements, leftAt(key, at, fmt.Sprintf("l%d", i)))
		} else {
			elements = append(elements, rightAt(key, at, fmt.Sprintf("r%d", i)))
		}
	}

	// The oracle: per key and sliding window, the number of left values
	// in it times the number of right values in it, for every window
	// with a pair. A window [start, start+size) holds t if start <= t <
	// start+size; starts are multiples of the period.
	type keyWindow struct {
		key   string
		start int64
	}
	inWindow := map[keyWindow][2]int{}
	for _, e := range elements {
		last := e.Ms - e.Ms%period.Milliseconds()
		for start := last; start > e.Ms-size.Milliseconds(); start -= period.Milliseconds() {
			kw := keyWindow{e.Key, start}
			n := inWindow[kw]
			if e.Right {
				n[1]++
			} else {
				n[0]++
			}
			inWindow[kw] = n
		}
	}
	var want []string
	for kw, n := range inWindow {
		if pairs := n[0] * n[1]; pairs > 0 {
			start := time.UnixMilli(kw.start)
			want = append(want, fmt.Sprintf("%s %s %d", kw.key, bounds(start, start.Add(size)), pairs))
		}
	}
	if len(want) < 10 {
		t.Fatalf("the input makes pairs in %d windows only; want a test that can tell windows apart", len(want))
	}

	for _, path := range []struct {
		name string
		opts []join.Option
	}{
		{"grouped", nil},
		{"late_counting", []join.Option{join.ReportLate()}},
	} {
		t.Run(path.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := timedInputs(s, elements)
			opts := append([]join.Option{join.WindowInto(window.NewSlidingWindows(period, size))}, path.opts...)
			records := join.Window[string, string, note](s, left, right, opts...).Records
			counts := stats.Count(s, beam.ParDo(s, windowResultKey, records))
			got := gather(s, beam.ParDo(s, describeCount, counts))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedList(want), got()); diff != "" {
				t.Errorf("pairs per key and sliding window differ (-oracle +pipeline):\n%s", diff)
			}
		})
	}
}
