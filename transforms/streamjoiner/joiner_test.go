package streamjoiner

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// ev is an element of either side in these tests: a key, a timestamp in
// milliseconds and a name that shows in the output.
type ev struct {
	Key  string
	At   int64
	Name string
}

func L(key string, at int64, name string) step { return step{side: "left", in: ev{key, at, name}} }
func R(key string, at int64, name string) step { return step{side: "right", in: ev{key, at, name}} }

// step feeds one element and says what the joiner answers.
type step struct {
	side string
	in   ev
	out  []string // records, "left+right" with "_" for an absent side
	size [2]int   // LeftBufferSize, RightBufferSize afterwards
}

func (s step) want(size [2]int, out ...string) step {
	s.out, s.size = out, size
	return s
}

// name is the JoinFunc of these tests.
func name(l, r *ev) (string, error) {
	ln, rn := "_", "_"
	if l != nil {
		ln = l.Name
	}
	if r != nil {
		rn = r.Name
	}
	return ln + "+" + rn, nil
}

// joinerConfig is what a test says about a joiner of ev elements keyed by
// Key; opts turns it into New's options, leaving out the zero fields.
type joinerConfig struct {
	Type                join.Type
	Lower, Upper        time.Duration
	LeftTime, RightTime func(ev) int64
	Clock               func() time.Time
	MaxStateSize        int
	StateRetention      time.Duration
}

func (c joinerConfig) opts() []Option {
	opts := []Option{JoinType(c.Type), Between(c.Lower, c.Upper), LeftTime(c.LeftTime), RightTime(c.RightTime)}
	if c.Clock != nil {
		opts = append(opts, Clock(c.Clock))
	}
	if c.MaxStateSize != 0 {
		opts = append(opts, MaxStateSize(c.MaxStateSize))
	}
	if c.StateRetention != 0 {
		opts = append(opts, StateRetention(c.StateRetention))
	}
	return opts
}

// config is a joiner of type ty with bounds [lower, upper] whose elements
// carry their timestamps in At.
func config(ty join.Type, lower, upper time.Duration) joinerConfig {
	at := func(e ev) int64 { return e.At }
	return joinerConfig{Type: ty, Lower: lower, Upper: upper, LeftTime: at, RightTime: at}
}

func evKey(e ev) string { return e.Key }

// newJoiner is New with the options of cfg.
func newJoiner[O any](cfg joinerConfig, fn JoinFunc[ev, ev, O]) (*StreamJoiner[string, ev, ev, O], error) {
	return New(evKey, evKey, fn, cfg.opts()...)
}

// run feeds the steps to a joiner made from cfg and diffs the whole
// transcript: every step's records and buffer sizes.
func run(t *testing.T, cfg joinerConfig, steps []step) {
	t.Helper()
	j, err := newJoiner(cfg, name)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	type result struct {
		In   string
		Out  []string
		Size [2]int
	}
	var got, want []result
	for _, s := range steps {
		var out []string
		if s.side == "left" {
			out, err = j.ProcessLeft(s.in)
		} else {
			out, err = j.ProcessRight(s.in)
		}
		if err != nil {
			t.Fatalf("Process %s %v: %v", s.side, s.in, err)
		}
		in := fmt.Sprintf("%s %s@%d %s", s.side, s.in.Key, s.in.At, s.in.Name)
		got = append(got, result{in, out, [2]int{j.LeftBufferSize(), j.RightBufferSize()}})
		want = append(want, result{in, s.out, s.size})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

const sec = int64(time.Second / time.Millisecond)

func TestJoinTypes(t *testing.T) {
	// The window lets a right element be 5 s before to 10 s after a left one.
	tests := []struct {
		name  string
		ty    join.Type
		steps []step
	}{
		{"inner_emits_pairs_only", join.Inner, []step{
			L("a", 10*sec, "l1").want([2]int{1, 0}),
			L("a", 12*sec, "l2").want([2]int{2, 0}),
			R("a", 20*sec, "r1").want([2]int{2, 1}, "l1+r1", "l2+r1"), // +10 s inclusive, +8 s
			R("b", 20*sec, "r2").want([2]int{2, 2}),
			L("b", 26*sec, "l3").want([2]int{3, 2}),         // r2 is 6 s before: outside
			R("a", 5*sec, "r3").want([2]int{3, 3}, "l1+r3"), // -5 s inclusive; l2 is -7 s
			L("c", 0, "l4").want([2]int{4, 3}),
		}},
		{"left_outer_emits_unmatched_left_on_arrival", join.LeftOuter, []step{
			L("a", 10*sec, "l1").want([2]int{1, 0}, "l1+_"),
			L("a", 12*sec, "l2").want([2]int{2, 0}, "l2+_"),
			R("a", 20*sec, "r1").want([2]int{2, 1}, "l1+r1", "l2+r1"),
			R("b", 20*sec, "r2").want([2]int{2, 2}),
			L("b", 26*sec, "l3").want([2]int{3, 2}, "l3+_"),
			R("a", 5*sec, "r3").want([2]int{3, 3}, "l1+r3"),
			L("c", 0, "l4").want([2]int{4, 3}, "l4+_"),
		}},
		{"right_outer_emits_unmatched_right_on_arrival", join.RightOuter, []step{
			L("a", 10*sec, "l1").want([2]int{1, 0}),
			L("a", 12*sec, "l2").want([2]int{2, 0}),
			R("a", 20*sec, "r1").want([2]int{2, 1}, "l1+r1", "l2+r1"),
			R("b", 20*sec, "r2").want([2]int{2, 2}, "_+r2"),
			L("b", 26*sec, "l3").want([2]int{3, 2}),
			R("a", 5*sec, "r3").want([2]int{3, 3}, "l1+r3"),
			L("c", 0, "l4").want([2]int{4, 3}),
		}},
		{"full_outer_emits_unmatched_of_both_sides", join.FullOuter, []step{
			L("a", 10*sec, "l1").want([2]int{1, 0}, "l1+_"),
			L("a", 12*sec, "l2").want([2]int{2, 0}, "l2+_"),
			R("a", 20*sec, "r1").want([2]int{2, 1}, "l1+r1", "l2+r1"),
			R("b", 20*sec, "r2").want([2]int{2, 2}, "_+r2"),
			L("b", 26*sec, "l3").want([2]int{3, 2}, "l3+_"),
			R("a", 5*sec, "r3").want([2]int{3, 3}, "l1+r3"),
			L("c", 0, "l4").want([2]int{4, 3}, "l4+_"),
		}},
		{"outer_late_partner_adds_pair_without_retraction", join.FullOuter, []step{
			R("a", 10*sec, "r1").want([2]int{0, 1}, "_+r1"),
			L("a", 10*sec, "l1").want([2]int{1, 1}, "l1+r1"),
			R("a", 11*sec, "r2").want([2]int{1, 2}, "l1+r2"),
		}},
		{"partners_in_timestamp_order_not_arrival_order", join.Inner, []step{
			R("a", 15*sec, "r15").want([2]int{0, 1}),
			R("a", 6*sec, "r6").want([2]int{0, 2}),
			R("a", 12*sec, "r12").want([2]int{0, 3}),
			L("a", 10*sec, "l").want([2]int{1, 3}, "l+r6", "l+r12", "l+r15"),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, config(tc.ty, -5*time.Second, 10*time.Second), tc.steps) })
	}
}

func TestBounds(t *testing.T) {
	// Offsets of a right element from a left one, in milliseconds.
	probes := []int64{-10001, -10000, -5001, -5000, -1, 0, 1, 5000, 5001, 10000, 10001}
	tests := []struct {
		name   string
		opts   []Option
		bounds string
		span   time.Duration
		joins  []int64
	}{
		{"asymmetric", []Option{Between(-5*time.Second, 10*time.Second)},
			"[-5s, 10s]", 15 * time.Second, []int64{-5000, -1, 0, 1, 5000, 5001, 10000}},
		{"symmetric", []Option{Between(-5*time.Second, 5*time.Second)},
			"[-5s, 5s]", 10 * time.Second, []int64{-5000, -1, 0, 1, 5000}},
		{"after_only_looks_forward", []Option{Between(0, 10*time.Second)},
			"[0s, 10s]", 10 * time.Second, []int64{0, 1, 5000, 5001, 10000}},
		{"before_only_looks_back", []Option{Between(-10*time.Second, 0)},
			"[-10s, 0s]", 10 * time.Second, []int64{-10000, -5001, -5000, -1, 0}},
		{"negative_upper_excludes_the_left_time", []Option{Between(-10*time.Second, -5*time.Second)},
			"[-10s, -5s]", 10 * time.Second, []int64{-10000, -5001, -5000}},
		{"zero_width_is_same_millisecond", []Option{Between(0, 0)},
			"[0s, 0s]", 0, []int64{0}},
		{"exclusive_ends", []Option{Between(-5*time.Second, 5*time.Second), LowerExclusive(), UpperExclusive()},
			"(-5s, 5s)", 9998 * time.Millisecond, []int64{-1, 0, 1}},
		{"lower_exclusive_only", []Option{LowerExclusive(), Between(-5*time.Second, 0)},
			"(-5s, 0s]", 4999 * time.Millisecond, []int64{-1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			type view struct {
				Bounds string
				Span   time.Duration
				Joins  []int64
			}
			// A joiner with the bounds pairs exactly the offsets inside them.
			at := func(e ev) int64 { return e.At }
			opts := append([]Option{LeftTime(at), RightTime(at), StateRetention(time.Hour)}, tc.opts...)
			j, err := New(evKey, evKey, name, opts...)
			if err != nil {
				t.Fatalf("New() = %v", err)
			}
			got := view{Bounds: j.cfg.bounds.String(), Span: boundsSpan(j.cfg.bounds)}
			const ref = 100 * sec
			if _, err := j.ProcessLeft(ev{"k", ref, "l"}); err != nil {
				t.Fatal(err)
			}
			for _, d := range probes {
				out, err := j.ProcessRight(ev{"k", ref + d, "r"})
				if err != nil {
					t.Fatal(err)
				}
				if len(out) > 0 {
					got.Joins = append(got.Joins, d)
				}
			}
			if diff := cmp.Diff(view{tc.bounds, tc.span, tc.joins}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEviction(t *testing.T) {
	tests := []struct {
		name  string
		ty    join.Type
		max   int
		steps []step
	}{
		{"oldest_across_keys_and_sides_goes_first", join.Inner, 3, []step{
			L("a", 5*sec, "la").want([2]int{1, 0}),
			R("b", 2*sec, "rb").want([2]int{1, 1}),
			L("c", 3*sec, "lc").want([2]int{2, 1}),
			R("d", 9*sec, "rd").want([2]int{2, 1}),                      // rb (2 s) goes
			L("b", 2*sec, "probe").want([2]int{2, 1}),                   // rb is gone; the probe is the oldest and goes
			R("c", 3*sec, "probe2").want([2]int{1, 2}, "lc+probe2"),     // lc was kept; now it goes, left first
			L("c", 3*sec, "probe3").want([2]int{1, 2}, "probe3+probe2"), // probe2 was kept
		}},
		{"equal_timestamps_evict_left_first", join.Inner, 2, []step{
			R("a", 3*sec, "r").want([2]int{0, 1}),
			L("b", 3*sec, "l").want([2]int{1, 1}),
			R("c", 4*sec, "r4").want([2]int{0, 2}),               // l goes, r stays
			L("a", 3*sec, "probe").want([2]int{0, 2}, "probe+r"), // r was kept; the probe is now the oldest left
		}},
		{"a_new_element_older_than_all_joins_then_goes", join.Inner, 2, []step{
			L("a", 10*sec, "l10").want([2]int{1, 0}),
			L("a", 11*sec, "l11").want([2]int{2, 0}),
			R("a", 8*sec, "r8").want([2]int{2, 0}, "l10+r8", "l11+r8"),
		}},
		{"eviction_emits_nothing_even_for_outer_joins", join.FullOuter, 1, []step{
			L("a", 1*sec, "l1").want([2]int{1, 0}, "l1+_"),
			R("b", 2*sec, "r2").want([2]int{0, 1}, "_+r2"),
			L("c", 3*sec, "l3").want([2]int{1, 0}, "l3+_"),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(tc.ty, -5*time.Second, 5*time.Second)
			cfg.MaxStateSize = tc.max
			run(t, cfg, tc.steps)
		})
	}
}

func TestRetention(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"measured_from_largest_timestamp_on_either_side", []step{
			L("a", 0, "l0").want([2]int{1, 0}),
			L("b", 15*sec, "l15").want([2]int{2, 0}),
			R("c", 30*sec, "r30").want([2]int{1, 1}), // cutoff 10 s: l0 goes
			R("a", 5*sec, "r5").want([2]int{1, 1}),   // l0 is gone; r5 is behind the cutoff and goes too
			R("b", 20*sec, "r20").want([2]int{1, 2}, "l15+r20"),
		}},
		{"element_at_the_cutoff_stays", []step{
			L("a", 30*sec, "l30").want([2]int{1, 0}),
			L("x", 10*sec, "l10").want([2]int{2, 0}),
			R("x", 10*sec, "r10").want([2]int{2, 1}, "l10+r10"),
			R("y", 30*sec+1, "r").want([2]int{1, 1}), // cutoff 10 s + 1 ms: l10 and r10 go
		}},
		{"a_late_element_still_joins_what_is_buffered", []step{
			L("a", 100*sec, "l100").want([2]int{1, 0}),
			L("a", 79*sec, "l79").want([2]int{1, 0}), // behind the cutoff 80 s
			R("a", 99*sec, "r99").want([2]int{1, 1}, "l100+r99"),
		}},
		{"an_old_timestamp_does_not_move_the_cutoff_back", []step{
			L("a", 100*sec, "l100").want([2]int{1, 0}),
			L("b", 0, "l0").want([2]int{1, 0}),
			R("b", 0, "r0").want([2]int{1, 0}), // l0 dropped, so no pair
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(join.Inner, -10*time.Second, 10*time.Second)
			cfg.StateRetention = 20 * time.Second
			cfg.Clock = func() time.Time {
				t.Error("the clock was read; retention must be measured from timestamps")
				return time.Time{}
			}
			run(t, cfg, tc.steps)
		})
	}
}

// TestRetentionIgnoresTheClock feeds timestamps from 1970 while the clock
// says 2026: nothing is dropped for being old by the clock.
func TestRetentionIgnoresTheClock(t *testing.T) {
	cfg := config(join.Inner, -time.Second, time.Second)
	cfg.StateRetention = time.Second * 2
	cfg.RightTime = nil
	cfg.Clock = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	j, err := newJoiner(cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(5) {
		if _, err := j.ProcessLeft(ev{fmt.Sprint(i), i, "l"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := j.LeftBufferSize(); got != 5 {
		t.Errorf("LeftBufferSize() = %d, want 5", got)
	}
	// A right element stamped by the clock moves the largest timestamp to
	// 2026, and everything from 1970 goes.
	if _, err := j.ProcessRight(ev{Key: "0", Name: "r"}); err != nil {
		t.Fatal(err)
	}
	if got := [2]int{j.LeftBufferSize(), j.RightBufferSize()}; got != [2]int{0, 1} {
		t.Errorf("sizes = %v, want [0 1]", got)
	}
}

func TestDefaultTimestampIsArrivalClock(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	cfg := config(join.LeftOuter, -5*time.Second, 5*time.Second)
	cfg.LeftTime, cfg.RightTime = nil, nil
	cfg.Clock = func() time.Time { return now }
	j, err := newJoiner(cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	feed := func(left bool, e ev, advance time.Duration) {
		var out []string
		var err error
		if left {
			out, err = j.ProcessLeft(e)
		} else {
			out, err = j.ProcessRight(e)
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out)
		now = now.Add(advance)
	}
	feed(true, ev{Key: "a", At: 99, Name: "l1"}, 5*time.Second) // At is ignored
	feed(false, ev{Key: "a", Name: "r1"}, time.Millisecond)     // 5 s later: still in the window
	feed(false, ev{Key: "a", Name: "r2"}, 0)                    // 5.001 s: outside
	want := [][]string{{"l1+_"}, {"l1+r1"}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNewErrors(t *testing.T) {
	at := func(e ev) int64 { return e.At }
	valid := []Option{Between(-5*time.Second, 5*time.Second), LeftTime(at), RightTime(at)}
	const op = "beamjoin: streamjoiner.New"
	tests := []struct {
		name    string
		leftKey func(ev) string
		fn      JoinFunc[ev, ev, string]
		opts    []Option
		want    string
	}{
		{"unknown_type", evKey, name, []Option{JoinType(7)},
			op + ": unknown join type Type(7)"},
		{"nil_option", evKey, name, []Option{nil},
			op + ": option 3 is nil"},
		{"bounds_match_nothing", evKey, name, []Option{Between(5*time.Second, 2*time.Second)},
			op + ": Between: lower bound 5s is greater than upper bound 2s"},
		{"exclusive_ends_leave_nothing", evKey, name, []Option{Between(0, 0), UpperExclusive()},
			op + ": Between: bounds [0s, 0s) match nothing: the interval is empty once its exclusive ends are removed"},
		{"bounds_finer_than_a_millisecond", evKey, name, []Option{Between(0, 1500*time.Microsecond)},
			op + ": Between: bounds [0s, 1.5ms] must be whole milliseconds, the precision of event time"},
		{"missing_left_key", nil, name, nil,
			op + ": the left key selector is nil"},
		{"missing_join_function", evKey, nil, nil,
			op + ": the join function is nil"},
		{"left_time_of_another_type", evKey, name, []Option{LeftTime(func(int) int64 { return 0 })},
			op + ": LeftTime takes a func(streamjoiner.ev) int64 for this joiner's left elements, got func(int) int64"},
		{"right_time_of_another_type", evKey, name, []Option{RightTime(func(*ev) int64 { return 0 })},
			op + ": RightTime takes a func(streamjoiner.ev) int64 for this joiner's right elements, got func(*streamjoiner.ev) int64"},
		{"zero_max_state_size", evKey, name, []Option{MaxStateSize(0)},
			op + ": MaxStateSize(0) must be positive"},
		{"negative_retention", evKey, name, []Option{StateRetention(-time.Second)},
			op + ": StateRetention(-1s) must be a positive whole number of milliseconds, the precision of timestamps"},
		{"retention_finer_than_a_millisecond", evKey, name, []Option{StateRetention(time.Minute + time.Microsecond)},
			op + ": StateRetention(1m0.000001s) must be a positive whole number of milliseconds, the precision of timestamps"},
		{"retention_shorter_than_bounds_span", evKey, name, []Option{StateRetention(9 * time.Second)},
			op + ": StateRetention(9s) is shorter than the span 10s of the bounds [-5s, 5s]: elements still inside the bounds would be dropped"},
		{"default_retention_shorter_than_bounds_span", evKey, name, []Option{Between(-time.Hour, time.Minute)},
			op + ": the default StateRetention, 1h0m0s, is shorter than the span 1h1m0s of the bounds [-1h0m0s, 1m0s]: elements still inside the bounds would be dropped"},
		{"retention_shorter_than_far_end_of_one_sided_bounds", evKey, name, []Option{Between(-10*time.Second, -2*time.Second), StateRetention(8 * time.Second)},
			op + ": StateRetention(8s) is shorter than the span 10s of the bounds [-10s, -2s]: elements still inside the bounds would be dropped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, err := New(tc.leftKey, evKey, tc.fn, append(append([]Option{}, valid...), tc.opts...)...)
			if err == nil {
				t.Fatalf("New() = %v, nil; want error %q", j, tc.want)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := New(evKey, evKey, name, LeftTime(at)); err == nil || err.Error() != op+" needs bounds: add streamjoiner.Between(lower, upper)" {
		t.Errorf("New() without Between: %v", err)
	}
	if _, err := New(evKey, nil, name, valid...); err == nil || err.Error() != op+": the right key selector is nil" {
		t.Errorf("New() with a nil right key: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	j, err := New(evKey, evKey, name, Between(-time.Second, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := []any{j.cfg.typ, j.cfg.maxStateSize, j.cfg.retention, j.cfg.clock != nil, j.cfg.leftTime == nil, j.cfg.rightTime == nil}
	if diff := cmp.Diff([]any{join.Inner, 10000, time.Hour, true, true, true}, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	// The later of two options wins.
	j, err = New(evKey, evKey, name, Between(-time.Second, time.Second), JoinType(join.FullOuter), JoinType(join.LeftOuter), MaxStateSize(5), MaxStateSize(7))
	if err != nil {
		t.Fatal(err)
	}
	if got := []any{j.cfg.typ, j.cfg.maxStateSize}; !cmp.Equal(got, []any{join.LeftOuter, 7}) {
		t.Errorf("type and size = %v, want [left 7]", got)
	}
	// The span may equal the retention exactly.
	cfg := config(join.Inner, -30*time.Minute, 30*time.Minute)
	if _, err := newJoiner(cfg, name); err != nil {
		t.Errorf("New() with span = retention: %v", err)
	}
}

func TestBadKeys(t *testing.T) {
	var nilString *string
	s := "k"
	tests := []struct {
		name      string
		join      func() keyResult
		wantLeft  string
		wantRight string
	}{
		{"empty_string", func() keyResult {
			return feedBoth(evKey, evKey, ev{Key: ""})
		}, "beamjoin: left key selector returned an empty key", "beamjoin: right key selector returned an empty key"},
		{"nil_pointer", func() keyResult {
			return feedBoth(func(ev) *string { return nilString }, func(ev) *string { return nilString }, ev{})
		}, "beamjoin: left key selector returned an empty key", "beamjoin: right key selector returned an empty key"},
		{"nil_interface", func() keyResult {
			return feedBoth(func(ev) any { return nil }, func(ev) any { return nil }, ev{})
		}, "beamjoin: left key selector returned an empty key", "beamjoin: right key selector returned an empty key"},
		{"nil_pointer_in_interface", func() keyResult {
			return feedBoth(func(ev) any { return nilString }, func(ev) any { return nilString }, ev{})
		}, "beamjoin: left key selector returned an empty key", "beamjoin: right key selector returned an empty key"},
		{"empty_string_in_interface", func() keyResult {
			return feedBoth(func(ev) any { return "" }, func(ev) any { return "" }, ev{})
		}, "beamjoin: left key selector returned an empty key", "beamjoin: right key selector returned an empty key"},
		{"zero_int_is_a_key", func() keyResult {
			return feedBoth(func(ev) int { return 0 }, func(ev) int { return 0 }, ev{})
		}, "", ""},
		{"zero_int_in_interface_is_a_key", func() keyResult {
			return feedBoth(func(ev) any { return 0 }, func(ev) any { return 0 }, ev{})
		}, "", ""},
		{"incomparable_value_in_interface", func() keyResult {
			return feedBoth(func(ev) any { return []byte("k") }, func(ev) any { return map[int]int{1: 1} }, ev{})
		}, "beamjoin: left key selector returned a key of type []uint8, which is not comparable",
			"beamjoin: right key selector returned a key of type map[int]int, which is not comparable"},
		{"incomparable_value_in_struct_field", func() keyResult {
			type anyID struct {
				Shop string
				ID   any
			}
			return feedBoth(func(ev) anyID { return anyID{"s", []byte("k")} }, func(ev) anyID { return anyID{"s", map[int]int{}} }, ev{})
		}, "beamjoin: left key selector returned a key with a []uint8 at ID, which is not comparable",
			"beamjoin: right key selector returned a key with a map[int]int at ID, which is not comparable"},
		{"incomparable_value_deep_in_struct", func() keyResult {
			type inner struct{ Parts [2]any }
			type outer struct{ In inner }
			return feedBoth(func(ev) outer { return outer{inner{[2]any{1, []int{2}}}} }, func(ev) outer { return outer{inner{[2]any{1, 2}}} }, ev{})
		}, "beamjoin: left key selector returned a key with a []int at In.Parts[1], which is not comparable", ""},
		{"nan_key", func() keyResult {
			return feedBoth(func(ev) float64 { return math.NaN() }, func(ev) float64 { return math.NaN() }, ev{})
		}, "beamjoin: left key selector returned a key that holds a NaN, which equals no key, so nothing could ever match it",
			"beamjoin: right key selector returned a key that holds a NaN, which equals no key, so nothing could ever match it"},
		{"nan_in_struct_and_interface", func() keyResult {
			type at struct{ X, Y float64 }
			return feedBoth(func(ev) any { return at{1, math.NaN()} }, func(ev) any { return math.NaN() }, ev{})
		}, "beamjoin: left key selector returned a key that holds a NaN, which equals no key, so nothing could ever match it",
			"beamjoin: right key selector returned a key that holds a NaN, which equals no key, so nothing could ever match it"},
		{"float_key_is_fine", func() keyResult {
			return feedBoth(func(ev) float64 { return 0.5 }, func(ev) float64 { return 0.5 }, ev{})
		}, "", ""},
		{"pointer_key_is_fine", func() keyResult {
			return feedBoth(func(ev) *string { return &s }, func(ev) *string { return &s }, ev{})
		}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.join()
			left, right, sizes := res.left, res.right, res.sizes
			got := []string{errString(left), errString(right)}
			if diff := cmp.Diff([]string{tc.wantLeft, tc.wantRight}, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			for _, err := range []error{left, right} {
				empty, unusable := errors.Is(err, ErrEmptyKey), errors.Is(err, ErrUnusableKey)
				if err != nil && empty == unusable {
					t.Errorf("%v: errors.Is ErrEmptyKey %v, ErrUnusableKey %v; want exactly one", err, empty, unusable)
				}
			}
			var wantSizes [2]int
			for s, want := range []string{tc.wantLeft, tc.wantRight} {
				if want == "" {
					wantSizes[s] = 1
				}
			}
			if sizes != wantSizes {
				t.Errorf("buffer sizes = %v, want %v", sizes, wantSizes)
			}
			// A rejected element is counted, and only as rejected.
			var wantStats Stats
			for s, side := range []*SideStats{&wantStats.Left, &wantStats.Right} {
				if wantSizes[s] == 1 {
					side.In, side.Buffered = 1, 1
				} else {
					side.Rejected = 1
				}
			}
			// Full outer: the left element is emitted alone; the right one
			// pairs with it, or is emitted alone too.
			switch wantSizes {
			case [2]int{1, 1}:
				wantStats.Pairs, wantStats.Left.Matched, wantStats.Right.Matched = 1, 1, 1
				wantStats.Left.Unmatched, wantStats.Left.MatchedAfterUnmatched = 1, 1
			case [2]int{1, 0}:
				wantStats.Left.Unmatched = 1
			case [2]int{0, 1}:
				wantStats.Right.Unmatched = 1
			}
			if diff := cmp.Diff(wantStats, res.stats); diff != "" {
				t.Errorf("Stats() (-want +got):\n%s", diff)
			}
		})
	}
}

// keyResult is what feedBoth saw: the error of each side and the buffer
// sizes afterwards.
type keyResult struct {
	left, right error
	sizes       [2]int
	stats       Stats
}

// feedBoth feeds e to both sides of a full outer joiner with the key
// selectors given.
func feedBoth[K comparable](leftKey, rightKey func(ev) K, e ev) keyResult {
	zero := func(ev) int64 { return 0 }
	j, err := New(leftKey, rightKey, name, Between(-time.Second, time.Second), JoinType(join.FullOuter), LeftTime(zero), RightTime(zero))
	if err != nil {
		panic(err)
	}
	lout, left := j.ProcessLeft(e)
	rout, right := j.ProcessRight(e)
	if (left != nil && lout != nil) || (right != nil && rout != nil) {
		panic("records returned with an empty key error")
	}
	return keyResult{left, right, [2]int{j.LeftBufferSize(), j.RightBufferSize()}, j.Stats()}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestJoinFuncError checks that a failing JoinFunc fails the call, which
// then returns no records and changes nothing, so that a caller that calls
// again gets every pair exactly once.
func TestJoinFuncError(t *testing.T) {
	boom := errors.New("boom")
	flaky := 1 // how many more times l2+r2 fails
	j, err := newJoiner(config(join.FullOuter, -10*time.Second, 10*time.Second), func(l, r *ev) (string, error) {
		if l != nil && l.Name == "bad" || r != nil && r.Name == "bad" {
			return "", boom
		}
		if l != nil && r != nil && l.Name == "l2" && r.Name == "r2" && flaky > 0 {
			flaky--
			return "", boom
		}
		return name(l, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Out   []string
		Err   string
		Sizes [2]int
	}
	var got []result
	record := func(out []string, err error) {
		got = append(got, result{out, errString(err), [2]int{j.LeftBufferSize(), j.RightBufferSize()}})
		if err != nil && !errors.Is(err, boom) {
			t.Errorf("errors.Is(%v, boom) = false", err)
		}
	}
	record(j.ProcessLeft(ev{"a", 1 * sec, "l1"}))
	record(j.ProcessLeft(ev{"a", 2 * sec, "bad"}))
	record(j.ProcessLeft(ev{"a", 2 * sec, "l2"}))
	record(j.ProcessRight(ev{"a", 3 * sec, "r2"}))
	record(j.ProcessRight(ev{"a", 3 * sec, "r2"})) // the caller calls again
	record(j.ProcessRight(ev{"b", 4 * sec, "bad"}))
	want := []result{
		{[]string{"l1+_"}, "", [2]int{1, 0}},
		// Not buffered: r2 will not pair with it.
		{nil, "beamjoin: join function failed on key a, unmatched left at 2000: boom", [2]int{1, 0}},
		{[]string{"l2+_"}, "", [2]int{2, 0}},
		// l1+r2 was made before l2+r2 failed, but is not returned, and r2
		// is not buffered.
		{nil, "beamjoin: join function failed on key a, left at 2000 and right at 3000: boom", [2]int{2, 0}},
		{[]string{"l1+r2", "l2+r2"}, "", [2]int{2, 1}},
		{nil, "beamjoin: join function failed on key b, unmatched right at 4000: boom", [2]int{2, 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	wantStats := Stats{
		Left:  SideStats{In: 2, Rejected: 1, Matched: 2, Unmatched: 2, MatchedAfterUnmatched: 2, Buffered: 2},
		Right: SideStats{In: 1, Rejected: 2, Matched: 1, Buffered: 1},
		Pairs: 2,
	}
	if diff := cmp.Diff(wantStats, j.Stats()); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
}

func TestClear(t *testing.T) {
	cfg := config(join.Inner, -10*time.Second, 10*time.Second)
	cfg.StateRetention = 20 * time.Second
	j, err := newJoiner(cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	j.ProcessLeft(ev{"a", 100 * sec, "l"})
	j.ProcessRight(ev{"b", 100 * sec, "r"})
	j.Clear()
	if got := [2]int{j.LeftBufferSize(), j.RightBufferSize()}; got != [2]int{} {
		t.Errorf("sizes after Clear = %v, want [0 0]", got)
	}
	// The largest timestamp is forgotten too: old data joins again.
	j.ProcessLeft(ev{"a", 0, "l0"})
	out, _ := j.ProcessRight(ev{"a", 0, "r0"})
	if diff := cmp.Diff([]string{"l0+r0"}, out); diff != "" {
		t.Errorf("after Clear (-want +got):\n%s", diff)
	}
}

// TestConcurrentCallers runs many goroutines against one joiner under the
// race detector. Every key gets the same elements in some interleaving; an
// inner join's pairs depend only on which elements are present, so the
// result is known whatever the interleaving.
func TestConcurrentCallers(t *testing.T) {
	const goroutines, keys, perKey = 16, 8, 12 // perKey elements per side and key
	j, err := newJoiner(config(join.Inner, -time.Second, time.Second), name)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		got []string
		wg  sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			var mine []string
			for i := g; i < keys*perKey*2; i += goroutines {
				k, n := fmt.Sprint(i%keys), i/keys
				e := ev{Key: k, At: int64(n % perKey), Name: fmt.Sprintf("%s.%d", k, n%perKey)}
				var out []string
				var err error
				if n < perKey {
					out, err = j.ProcessLeft(e)
				} else {
					out, err = j.ProcessRight(e)
				}
				if err != nil {
					t.Error(err)
				}
				mine = append(mine, out...)
				_ = j.LeftBufferSize() + j.RightBufferSize()
			}
			mu.Lock()
			got = append(got, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	var want []string
	for k := range keys {
		for l := range perKey {
			for r := range perKey {
				want = append(want, fmt.Sprintf("%d.%d+%d.%d", k, l, k, r))
			}
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
	if got := [2]int{j.LeftBufferSize(), j.RightBufferSize()}; got != [2]int{keys * perKey, keys * perKey} {
		t.Errorf("sizes = %v, want both %d", got, keys*perKey)
	}

	// Clear and the size cap under contention: no race, and the cap holds.
	cfg := config(join.FullOuter, -time.Second, time.Second)
	cfg.MaxStateSize = 50
	j2, err := newJoiner(cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	for g := range goroutines {
		wg.Go(func() {
			for i := range 300 {
				e := ev{Key: fmt.Sprint(i % 7), At: int64(i), Name: "x"}
				switch (g + i) % 5 {
				case 0:
					j2.ProcessLeft(e)
				case 1, 2:
					j2.ProcessRight(e)
				case 3:
					// Two calls: each size is within the cap, their sum need
					// not be, as elements move between the calls.
					if l, r := j2.LeftBufferSize(), j2.RightBufferSize(); l > cfg.MaxStateSize || r > cfg.MaxStateSize {
						t.Errorf("%d and %d buffered, cap %d", l, r, cfg.MaxStateSize)
					}
				case 4:
					if i%50 == 0 {
						j2.Clear()
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestJoinedElement(t *testing.T) {
	type shape struct {
		Left, Right                      *string
		Timestamp                        int64
		LeftOnly, RightOnly, BothPresent bool
	}
	view := func(e JoinedElement[string, string]) shape {
		return shape{e.Left, e.Right, e.Timestamp, e.IsLeftOnly(), e.IsRightOnly(), e.IsBothPresent()}
	}
	l, r, empty := "l", "r", ""
	tests := []struct {
		name string
		got  JoinedElement[string, string]
		want shape
	}{
		{"joined_holds_both", Joined("l", "r", 7), shape{&l, &r, 7, false, false, true}},
		{"left_only_has_no_right", LeftOnly[string, string]("l", 8), shape{Left: &l, Timestamp: 8, LeftOnly: true}},
		{"right_only_has_no_left", RightOnly[string]("r", 9), shape{Right: &r, Timestamp: 9, RightOnly: true}},
		{"zero_value_is_present_not_absent", LeftOnly[string, string]("", 0), shape{Left: &empty, LeftOnly: true}},
		{"zero_element_holds_neither", JoinedElement[string, string]{}, shape{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, view(tc.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
