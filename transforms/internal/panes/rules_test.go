package panes

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

func TestAssign(t *testing.T) {
	tests := []struct {
		name string
		wf   Windowing
		ts   int64
		want []Window
	}{
		{"fixed", Windowing{Kind: Fixed, Size: 10}, 13, []Window{{10, 20}}},
		{"fixed_at_a_boundary_starts_a_window", Windowing{Kind: Fixed, Size: 10}, 10, []Window{{10, 20}}},
		{"fixed_before_the_epoch", Windowing{Kind: Fixed, Size: 10}, -3, []Window{{-10, 0}}},
		{"sliding_in_order_of_ends", Windowing{Kind: Sliding, Size: 10, Period: 5}, 7, []Window{{0, 10}, {5, 15}}},
		{"sliding_size_not_a_multiple_of_the_period", Windowing{Kind: Sliding, Size: 10, Period: 4}, 9, []Window{{0, 10}, {4, 14}, {8, 18}}},
		{"session_is_a_proto_session", Windowing{Kind: Sessions, Gap: 5}, 7, []Window{{7, 12}}},
		{"global", Windowing{}, 7, []Window{GlobalWindow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.wf.Assign(tt.ts)); diff != "" {
				t.Errorf("Assign(%d) (-want +got):\n%s", tt.ts, diff)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	merged, into := merge([]Window{{20, 25}, {0, 5}, {3, 8}, {8, 13}, {7, 12}})
	if diff := cmp.Diff([]Window{{0, 13}, {20, 25}}, merged); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 0, 0, 0, 0}, into); diff != "" {
		t.Errorf("into (-want +got):\n%s", diff)
	}
	// Windows that only touch merge, as Prism's GroupByKey merges them
	// (prism/internal/handlerunner.go: a gap only when one starts after the
	// other ends); the window join must group as the SDK's CoGroupByKey did.
	merged, _ = merge([]Window{{0, 5}, {5, 10}, {11, 12}})
	if diff := cmp.Diff([]Window{{0, 10}, {11, 12}}, merged); diff != "" {
		t.Errorf("touching windows (-want +got):\n%s", diff)
	}
}

func TestTimes(t *testing.T) {
	r := Rules{Windowing: Windowing{Kind: Fixed, Size: 10}, Lateness: 5}
	w := Window{0, 10}
	if got := r.FireAt(w); got != 10 {
		t.Errorf("FireAt = %d, want 10 (the window's end: an element at 9 is on time until then)", got)
	}
	if got := r.ExpireAt(w); got != 15 {
		t.Errorf("ExpireAt = %d, want 15 (max timestamp 9 + lateness 5, passed)", got)
	}
	if r.Expired(w, 14) || !r.Expired(w, 15) || r.Expired(w, NoTime) {
		t.Errorf("Expired at 14, 15, NoTime = %v, %v, %v; want false, true, false", r.Expired(w, 14), r.Expired(w, 15), r.Expired(w, NoTime))
	}
	if got := (Rules{}).FireAt(GlobalWindow); got != EndOfGlobal {
		t.Errorf("the global window fires at %d, want EndOfGlobal", got)
	}
	if !(Rules{}).Expired(GlobalWindow, EndOfGlobal) {
		t.Errorf("the global window has not expired at the end of input")
	}
}

// describe writes a firing as sorted lines: "pane [0,10) l1 *r1" (new
// entries starred), "missed l2 [0,10)", "late l2", "done l1 matched".
func describe(f Firing) []string {
	var lines []string
	name := func(e Entry) string { return string(e.Value) }
	for _, p := range f.Panes {
		var es []string
		for i, e := range p.Entries {
			star := ""
			if p.New[i] {
				star = "*"
			}
			es = append(es, star+name(e))
		}
		slices.Sort(es)
		lines = append(lines, fmt.Sprintf("pane %v %s", p.Window, strings.Join(es, " ")))
	}
	for _, m := range f.Missed {
		lines = append(lines, fmt.Sprintf("missed %s %v", name(m.Entry), m.Window))
	}
	for _, e := range f.Late {
		lines = append(lines, "late "+name(e))
	}
	for _, e := range f.Done {
		matched := ""
		if e.Matched {
			matched = " matched"
		}
		lines = append(lines, "done "+name(e)+matched)
	}
	slices.Sort(lines)
	return lines
}

// key is one key's state and its pending timers, driven as the join's
// DoFn drives them, with the state written and read back as bytes.
type key struct {
	r      Rules
	chunks [][]byte
	timers map[int64]bool
}

func newKey(r Rules) *key { return &key{r: r, timers: map[int64]bool{}} }

// arrive adds an element and sets the timer of its first window, as the
// DoFn's ProcessElement does.
func (k *key) arrive(side match.Side, ts int64, name string) {
	e := NewEntry(side, ts, []byte(name))
	k.chunks = append(k.chunks, AppendEntry(nil, e))
	k.timers[k.r.FirstFiring(e)] = true
}

// fire fires the timer at at, as the DoFn's OnTimer does.
func (k *key) fire(t *testing.T, at int64) []string {
	t.Helper()
	delete(k.timers, at)
	st, err := Decode(k.chunks)
	if err != nil {
		t.Fatal(err)
	}
	f := k.r.Fire(&st, at)
	switch {
	case f.Forget:
		k.chunks = nil
	case f.Write:
		k.chunks = [][]byte{st.Encode()}
	}
	if f.Next != NoTime && !f.Forget {
		k.timers[f.Next] = true
	}
	return describe(f)
}

// advance fires, in order, every timer at or before wm.
func (k *key) advance(t *testing.T, wm int64) []string {
	t.Helper()
	var out []string
	for {
		next := NoTime
		for at := range k.timers {
			if at <= wm && (next == NoTime || at < next) {
				next = at
			}
		}
		if next == NoTime {
			return out
		}
		out = append(out, k.fire(t, next)...)
	}
}

func TestFire(t *testing.T) {
	fixed := Windowing{Kind: Fixed, Size: 10}
	type step struct {
		side    match.Side
		ts      int64
		name    string
		advance int64    // when name is "": advance the watermark to this
		want    []string // what the advance emits
	}
	l := func(ts int64, name string) step { return step{side: match.Left, ts: ts, name: name} }
	r := func(ts int64, name string) step { return step{side: match.Right, ts: ts, name: name} }
	wm := func(to int64, want ...string) step { return step{advance: to, want: want} }
	tests := []struct {
		name  string
		rules Rules
		steps []step
	}{
		{
			name:  "a_window_fires_once_at_its_end_and_expires_without_lateness",
			rules: Rules{Windowing: fixed},
			steps: []step{
				l(1, "l1"), r(3, "r1"), l(12, "l2"),
				wm(9),
				wm(10, "done l1 matched", "done r1 matched", "pane [0,10) *l1 *r1"),
				wm(20, "done l2", "pane [10,20) *l2"),
			},
		},
		{
			name:  "an_arrival_after_its_window_expired_on_the_key_is_late",
			rules: Rules{Windowing: fixed},
			steps: []step{
				l(1, "l1"),
				wm(10, "done l1", "pane [0,10) *l1"),
				// Its timer, at 10, fires again at once.
				r(5, "r1"),
				wm(10, "late r1", "missed r1 [0,10)"),
			},
		},
		{
			name:  "an_arrival_for_an_expired_window_the_key_never_had_is_late",
			rules: Rules{Windowing: fixed},
			steps: []step{
				l(25, "l1"),
				wm(30, "done l1", "pane [20,30) *l1"),
				r(5, "r1"),
				wm(30, "late r1", "missed r1 [0,10)"),
			},
		},
		{
			name:  "a_key_that_forgot_its_progress_takes_a_late_arrival_for_on_time",
			rules: Rules{Windowing: fixed},
			steps: []step{
				l(1, "l1"),
				wm(10, "done l1", "pane [0,10) *l1"),
				wm(20), // forgotten one window length later
				r(5, "r1"),
				wm(20, "done r1", "pane [0,10) *r1"),
			},
		},
		{
			name:  "within_the_allowed_lateness_an_arrival_adds_a_late_pane_with_the_window_values",
			rules: Rules{Windowing: fixed, Lateness: 5},
			steps: []step{
				l(1, "l1"),
				wm(10, "pane [0,10) *l1"),
				r(5, "r1"),
				wm(11, "pane [0,10) *r1 l1"),
				r(6, "r2"),
				wm(14, "pane [0,10) *r2 l1 r1"),
				wm(15, "done l1 matched", "done r1 matched", "done r2 matched"),
				r(7, "r3"),
				wm(15, "late r3", "missed r3 [0,10)"),
			},
		},
		{
			name:  "a_sliding_element_misses_only_its_expired_windows",
			rules: Rules{Windowing: Windowing{Kind: Sliding, Size: 10, Period: 5}},
			steps: []step{
				l(6, "l1"),
				wm(10, "pane [0,10) *l1"),
				r(7, "r1"),
				wm(15, "done l1 matched", "done r1 matched", "missed r1 [0,10)", "pane [5,15) *l1 *r1"),
			},
		},
		{
			name:  "sessions_merge_across_sides_and_fire_at_the_merged_end",
			rules: Rules{Windowing: Windowing{Kind: Sessions, Gap: 5}},
			steps: []step{
				l(0, "l1"), l(7, "l2"), r(3, "r1"), r(20, "r2"),
				wm(11),
				wm(12, "done l1 matched", "done l2 matched", "done r1 matched", "pane [0,12) *l1 *l2 *r1"),
				wm(25, "done r2", "pane [20,25) *r2"),
			},
		},
		{
			name:  "a_late_session_element_merging_into_a_retained_session_adds_a_pane_of_the_merged_session",
			rules: Rules{Windowing: Windowing{Kind: Sessions, Gap: 5}, Lateness: 10},
			steps: []step{
				l(0, "l1"),
				wm(5, "pane [0,5) *l1"),
				r(3, "r1"),
				wm(8, "pane [0,8) *r1 l1"),
				wm(20, "done l1 matched", "done r1 matched"),
			},
		},
		{
			name:  "the_global_window_fires_when_the_input_ends",
			rules: Rules{},
			steps: []step{
				l(1, "l1"), r(1_000_000, "r1"),
				wm(1_000_000_000),
				wm(EndOfGlobal, "done l1 matched", "done r1 matched", "pane "+GlobalWindow.String()+" *l1 *r1"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKey(tt.rules)
			for i, s := range tt.steps {
				var got []string
				if s.name == "" {
					got = k.advance(t, s.advance)
				} else {
					k.arrive(s.side, s.ts, s.name)
				}
				slices.Sort(got)
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Fatalf("step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}
