package asof

// This file drives the as-of join's stateful DoFn directly over the
// in-memory state and timers of package statetest, with timers fired
// exactly when a watermark passes them: for what needs an exact order of
// firings (lateness at the boundary, stale firings) and for counting state
// calls and buffered versions over more elements than a test pipeline can
// afford.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/statetest"
	"github.com/google/go-cmp/cmp"
)

// asofHarness runs an asofFn over string keys and values.
type asofHarness struct {
	t                        testing.TB
	ctx                      context.Context
	fn                       *asofFn
	states                   map[string]*statetest.State
	timers                   map[string]statetest.Timers
	out                      []string
	late                     []string
	firings, arrivals, lates int
	forgets                  int // firings that cleared a key's state
}

// ruleOption is one of the join's options, in the rules' terms.
type ruleOption func(*Rules)

// The options the tests give (join.LeftOuter, join.EmitFinal,
// join.EmitRetract, join.MaxAge, join.ProgressHorizon).
var (
	leftOuter   ruleOption = func(r *Rules) { r.Outer = true }
	emitFinal   ruleOption = func(r *Rules) { r.Retract = false }
	emitRetract ruleOption = func(r *Rules) { r.Retract = true }
)

func maxAge(d time.Duration) ruleOption { return func(r *Rules) { r.MaxAge = d.Milliseconds() } }

func progressHorizon(d time.Duration) ruleOption {
	return func(r *Rules) { r.Horizon = d.Milliseconds() }
}

// newAsofHarness runs the rules of an as-of join with opts over join.AsOf's
// defaults: Inner, EmitFinal, no MaxAge, a progress horizon of an hour
// (join.DefaultProgressHorizon).
func newAsofHarness(t testing.TB, opts ...ruleOption) *asofHarness {
	t.Helper()
	r := Rules{MaxAge: -1, Horizon: time.Hour.Milliseconds()}
	for _, o := range opts {
		o(&r)
	}
	return &asofHarness{t: t,
		ctx:    metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "harness"), "asof"),
		fn:     NewFn(r),
		states: map[string]*statetest.State{}, timers: map[string]statetest.Timers{}}
}

func (h *asofHarness) stores(key string) (*statetest.State, statetest.Timers) {
	if h.states[key] == nil {
		h.states[key], h.timers[key] = statetest.NewState(), statetest.Timers{}
	}
	return h.states[key], h.timers[key]
}

func (h *asofHarness) emit(et beam.EventTime, key beam.X, r raw.Record) {
	right := "-"
	if r.HasRight {
		right = fmt.Sprintf("%s@%d", r.Right, r.RightTime)
	}
	h.out = append(h.out, fmt.Sprintf("%v %v %s@%d %s t=%d", r.Kind, key, r.Left, r.LeftTime, right, et.Milliseconds()))
}

func (h *asofHarness) emitLate(et beam.EventTime, key beam.X, in raw.Encoded) {
	h.late = append(h.late, fmt.Sprintf("late %v %v %s@%d", raw.SideName[in.Side], key, in.Value, et.Milliseconds()))
}

// element delivers one element.
func (h *asofHarness) element(side match.Side, ms int64, key, value string) {
	h.t.Helper()
	sp, tp := h.stores(key)
	before := len(h.late)
	if err := h.fn.ProcessElement(h.ctx, window.GlobalWindow{}, beam.EventTime(ms), sp, tp, key,
		raw.Encoded{Side: uint8(side), Value: []byte(value)}, h.emit, h.emitLate); err != nil {
		h.t.Fatal(err)
	}
	if len(h.late) > before {
		h.lates++
	} else {
		h.arrivals++
	}
}

// advance moves the watermark to w: every timer at or before w fires, the
// earliest first, including timers that firings set.
func (h *asofHarness) advance(w int64) {
	h.t.Helper()
	for {
		var key string
		var next timers.TimerMap
		found := false
		for k, tp := range h.timers {
			for _, tm := range tp {
				if tm.FireTimestamp.Milliseconds() <= w && (!found || tm.FireTimestamp < next.FireTimestamp) {
					key, next, found = k, tm, true
				}
			}
		}
		if !found {
			return
		}
		h.fire(key, next)
	}
}

// fire delivers a firing of the key's timer tm, consuming it if it is set.
func (h *asofHarness) fire(key string, tm timers.TimerMap) {
	h.t.Helper()
	sp, tp := h.stores(key)
	if tp[tm.Tag] == tm {
		delete(tp, tm.Tag)
	}
	h.firings++
	had := len(sp.Bags["asof"]) > 0
	if err := h.fn.OnTimer(h.ctx, window.GlobalWindow{}, beam.EventTime(tm.HoldTimestamp), sp, tp, key,
		timers.Context{Family: tm.Family, Tag: tm.Tag}, h.emit, h.emitLate); err != nil {
		h.t.Fatal(err)
	}
	if had && len(sp.Bags["asof"]) == 0 {
		h.forgets++
	}
}

// key decodes a key's state.
func (h *asofHarness) key(key string) *keyState {
	h.t.Helper()
	sp, _ := h.stores(key)
	var chunks [][]byte
	chunks = append(chunks, sp.Bags["asof"]...)
	k, err := decodeKey(h.fn.Rules, chunks)
	if err != nil {
		h.t.Fatal(err)
	}
	return k
}

func (h *asofHarness) calls() int {
	n := 0
	for _, s := range h.states {
		n += s.Calls
	}
	return n
}

// TestAsOfLateAtTheBoundary fires timers exactly: a left element is final
// once the watermark passes it, and then a version that would change its
// record, or a left element before the key's progress, is late; a version
// after the progress is not, even when the watermark is past it (the join
// judges by its key's firings).
func TestAsOfLateAtTheBoundary(t *testing.T) {
	h := newAsofHarness(t, leftOuter)
	h.element(match.Right, 90, "k", "v90")
	h.element(match.Left, 100, "k", "l100")
	h.advance(200) // fires at 101: l100 is final with v90
	h.element(match.Right, 100, "k", "v100")
	h.element(match.Left, 99, "k", "l99")
	h.element(match.Right, 150, "k", "v150")
	h.element(match.Left, 160, "k", "l160")
	h.advance(1000)
	want := []string{"pair k l100@100 v90@90 t=100", "pair k l160@160 v150@150 t=160"}
	if d := cmp.Diff(want, h.out); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	wantLate := []string{"late right k v100@100", "late left k l99@99"}
	if d := cmp.Diff(wantLate, h.late); d != "" {
		t.Errorf("late (-want +got):\n%s", d)
	}
}

// TestAsOfTieIndependentOfArrival gives two versions at one time in both
// orders: the greater encoded value wins either way, under both emission
// modes; under EmitRetract the loser arriving first is retracted.
func TestAsOfTieIndependentOfArrival(t *testing.T) {
	for _, emit := range []struct {
		name string
		opt  ruleOption
	}{{"final", emitFinal}, {"retract", emitRetract}} {
		for _, order := range [][2]string{{"va", "vb"}, {"vb", "va"}} {
			t.Run(fmt.Sprintf("%v/%s_first", emit.name, order[0]), func(t *testing.T) {
				h := newAsofHarness(t, emit.opt)
				h.element(match.Left, 10, "k", "l")
				h.element(match.Right, 5, "k", order[0])
				h.element(match.Right, 5, "k", order[1])
				h.advance(100)
				var want []string
				if emit.name == "retract" && order[0] == "va" {
					want = []string{"pair k l@10 va@5 t=10", "retract k l@10 va@5 t=10"}
				}
				want = append(want, "pair k l@10 vb@5 t=10")
				got := slices.Clone(h.out)
				slices.Sort(got)
				slices.Sort(want)
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("records (-want +got):\n%s", d)
				}
			})
		}
	}
}

// TestAsOfStaleFiringChangesNothing delivers a key's firing twice: the
// second is stale, emits nothing, and sets the key's timer again.
func TestAsOfStaleFiringChangesNothing(t *testing.T) {
	h := newAsofHarness(t, leftOuter)
	h.element(match.Left, 10, "k", "l10")
	h.element(match.Left, 20, "k", "l20")
	_, tp := h.stores("k")
	var first timers.TimerMap
	for _, tm := range tp {
		first = tm
	}
	h.fire("k", first)
	h.fire("k", first) // delivered again
	h.advance(100)
	want := []string{"unmatched k l10@10 - t=10", "unmatched k l20@20 - t=20"}
	if d := cmp.Diff(want, h.out); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	if got := h.key("k").Progress; got != 21 {
		t.Errorf("progress %d, want 21", got)
	}
}

// steadyAsOfStream runs a steady stream of n steps on keys through h: at
// step i each key gets a version at 10i ms and a left element at 10i+5,
// and then the watermark moves to 10i-lag. After every advance it checks
// that each key keeps exactly what the rule requires (the latest version
// before the watermark, unless MaxAge makes it too old for any time from
// the watermark on, and every later one) and no left element the
// watermark has passed. It returns the most versions any key held and the
// most the rule required.
func steadyAsOfStream(tb testing.TB, h *asofHarness, keys []string, n, lag int64) (peak, peakRequired int) {
	tb.Helper()
	for i := int64(0); i < n; i++ {
		for _, k := range keys {
			h.element(match.Right, i*10, k, fmt.Sprintf("v%d", i))
			h.element(match.Left, i*10+5, k, fmt.Sprintf("l%d", i))
		}
		w := i*10 - lag
		h.advance(w)
		for _, k := range keys {
			ks := h.key(k)
			required := 0
			for j := int64(0); j <= i; j++ {
				v := j * 10
				latestBefore := v < w && v+10 >= w
				tooOld := h.fn.Rules.MaxAge >= 0 && w-v > h.fn.Rules.MaxAge
				if v >= w || (latestBefore && !tooOld) {
					required++
				}
			}
			if len(ks.Versions) != required {
				tb.Fatalf("key %s at watermark %d keeps %d versions, the rule requires %d", k, w, len(ks.Versions), required)
			}
			peak, peakRequired = max(peak, len(ks.Versions)), max(peakRequired, required)
			for _, l := range ks.Pending {
				if l.Time < w {
					tb.Fatalf("key %s at watermark %d still holds left element %d", k, w, l.Time)
				}
			}
		}
	}
	return peak, peakRequired
}

// TestAsOfSteadyStreamStateAndCalls runs a steady stream on a few keys (a
// version every 10 ms, a left element every 10 ms between them, the
// watermark 100 ms behind): after every advance each key keeps exactly
// what the rule requires (steadyAsOfStream) and its left elements not yet
// final, and the state calls are two an arrival, one a late element,
// three a firing (two for one that forgets the key).
func TestAsOfSteadyStreamStateAndCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []ruleOption
	}{
		{"final", nil},
		{"retract_max_age", []ruleOption{emitRetract, maxAge(35 * time.Millisecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newAsofHarness(t, tc.opts...)
			keys := []string{"a", "b", "c"}
			const lag, n = 100, 500
			peak, peakRequired := steadyAsOfStream(t, h, keys, n, lag)
			h.element(match.Right, 0, "a", "late")
			h.advance(1 << 40)
			// A firing that forgets a key reads and clears: two calls.
			if got, want := h.calls(), 2*h.arrivals+h.lates+3*h.firings-h.forgets; got != want {
				t.Errorf("%d state calls for %d arrivals, %d late, %d firings (%d forgetting): want %d", got, h.arrivals, h.lates, h.firings, h.forgets, want)
			}
			if len(h.out) != n*len(keys) {
				t.Errorf("%d records, want %d", len(h.out), n*len(keys))
			}
			t.Logf("peak versions per key %d, required %d; %d state calls for %d elements", peak, peakRequired, h.calls(), h.arrivals+h.lates)
		})
	}
}

// BenchmarkAsOfSteadyKey reports the most versions a key of a steady
// stream holds (peak-versions/key) beside the most the rule requires
// (required-versions/key), and the state calls per element, over the
// in-memory harness with timers fired exactly: a version and a left
// element every 10 ms on each of 3 keys, the watermark 100 ms behind.
//
//	go test ./transforms/join/internal/asof -run '^$' -bench BenchmarkAsOfSteadyKey -benchtime 1x
func BenchmarkAsOfSteadyKey(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []ruleOption
	}{
		{"final", nil},
		{"retract-max-age-35ms", []ruleOption{emitRetract, maxAge(35 * time.Millisecond)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var peak, required int
			var calls, elements int
			for range b.N {
				h := newAsofHarness(b, tc.opts...)
				peak, required = steadyAsOfStream(b, h, []string{"a", "b", "c"}, 2000, 100)
				calls, elements = h.calls(), h.arrivals+h.lates
			}
			b.ReportMetric(float64(peak), "peak-versions/key")
			b.ReportMetric(float64(required), "required-versions/key")
			b.ReportMetric(float64(calls)/float64(elements), "state-calls/elem")
		})
	}
}

// TestAsOfForgetsAKeyAHorizonAfterItsDataIsGone: a key whose versions
// have all aged out (MaxAge) and whose left elements are final keeps its
// progress for ProgressHorizon, judging a left element behind it late;
// then its state is cleared, and a left element behind the forgotten
// progress is joined as new.
func TestAsOfForgetsAKeyAHorizonAfterItsDataIsGone(t *testing.T) {
	h := newAsofHarness(t, leftOuter, maxAge(10*time.Millisecond), progressHorizon(time.Second))
	h.element(match.Right, 0, "k", "v0")
	h.element(match.Left, 5, "k", "l5")
	h.advance(100) // l5 final at 6; v0 too old from 11 on: progress 11
	if k := h.key("k"); len(k.Versions) != 0 || k.Progress != 11 {
		t.Fatalf("after the versions aged out: %d versions, progress %d; want 0 and 11", len(k.Versions), k.Progress)
	}
	h.element(match.Left, 8, "k", "l8") // behind the progress: late
	h.advance(1010)
	if got := h.key("k").Progress; got != 11 {
		t.Fatalf("progress %d a millisecond before the horizon, want 11 (still kept)", got)
	}
	h.advance(1011) // 11 + 1 s: forgotten
	if sp, _ := h.stores("k"); len(sp.Bags["asof"]) != 0 {
		t.Fatalf("state after the horizon: %d chunks, want none", len(sp.Bags["asof"]))
	}
	h.element(match.Left, 9, "k", "l9") // behind the forgotten progress: joined as new
	h.advance(2000)
	want := []string{"pair k l5@5 v0@0 t=5", "unmatched k l9@9 - t=9"}
	if d := cmp.Diff(want, h.out); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"late left k l8@8"}, h.late); d != "" {
		t.Errorf("late (-want +got):\n%s", d)
	}
	if sp, _ := h.stores("k"); len(sp.Bags["asof"]) != 0 || h.forgets != 2 {
		t.Errorf("at the end: %d chunks of state, %d forgettings; want none and 2 (once after l5, once after l9)", len(sp.Bags["asof"]), h.forgets)
	}
}
