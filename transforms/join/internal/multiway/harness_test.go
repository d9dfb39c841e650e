package multiway

// This file holds the runner-model harness of the multi-way join: it runs
// the real DoFn over in-memory state and timers under schedules the Beam
// model allows (elements of many keys in any order, the watermark
// advancing between them and leaving some behind, timers firing only once
// the watermark has passed them, in bundles that may fail and be retried
// on a fresh instance, whose bundle cache is then empty) and checks every
// run against the oracle (oracle_test.go).

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var traceOn bool

func trace(t *testing.T, f string, a ...any) {
	if traceOn {
		t.Logf(f, a...)
	}
}

// memState is one key's bag in memory.
type memState struct {
	state.Provider
	bag [][]byte
}

func (m *memState) ReadBagState(string) ([]any, []state.Transaction, error) {
	out := make([]any, len(m.bag))
	for i, v := range m.bag {
		out[i] = v
	}
	return out, nil, nil
}

func (m *memState) WriteBagState(t state.Transaction) error {
	m.bag = append(m.bag, slices.Clone(t.Val.([]byte)))
	return nil
}

func (m *memState) ClearBagState(state.Transaction) error { m.bag = nil; return nil }

// memTimers is one key's timers, by tag.
type memTimers map[string]timers.TimerMap

func (m memTimers) Set(t timers.TimerMap) {
	if t.Clear {
		delete(m, t.Tag)
		return
	}
	m[t.Tag] = t
}

// keyStore is what the runner keeps of a key.
type keyStore struct {
	st *memState
	tm memTimers
}

func (k keyStore) clone() keyStore {
	st := &memState{}
	for _, v := range k.st.bag {
		st.bag = append(st.bag, slices.Clone(v))
	}
	return keyStore{st: st, tm: maps.Clone(k.tm)}
}

// event is an input element of a case.
type event struct {
	Key   string
	Input int
	Time  int64
}

func (e event) value() string { return fmt.Sprintf("%s/%d@%d", e.Key, e.Input, e.Time) }

// run is one run of a case under a schedule: what came out.
type run struct {
	rows     map[string]int // net: +1 per row, -1 per retraction
	emitted  map[string]int // rows only
	late     map[string]bool
	fates    map[string]match.Fate
	problems []string
	stores   map[string]keyStore
	wm       int64
	behind   map[string]bool // elements behind the watermark on arrival
}

// rowKey writes a row as a string: its key and each input's value or "-".
func rowKey(key string, r Row) string {
	parts := []string{key}
	for i := range r.Times {
		if r.Present&(1<<i) == 0 {
			parts = append(parts, "-")
		} else {
			parts = append(parts, string(r.Values[i]))
		}
	}
	return strings.Join(parts, " ")
}

// play runs the events under the schedule drawn from rng.
func play(t *testing.T, cfg Config, events []event, rng *rand.Rand) *run {
	r := &run{rows: map[string]int{}, emitted: map[string]int{}, late: map[string]bool{}, fates: map[string]match.Fate{}, stores: map[string]keyStore{}, wm: -3, behind: map[string]bool{}}
	pending := slices.Clone(events)
	rng.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
	newFn := func() *Fn {
		f := NewFn(cfg)
		if err := f.Setup(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	fn := newFn()
	ctx := context.Background()
	store := func(k string) keyStore {
		s, ok := r.stores[k]
		if !ok {
			s = keyStore{st: &memState{}, tm: memTimers{}}
			r.stores[k] = s
		}
		return s
	}
	for len(pending) > 0 || r.hasDue() {
		// Maybe advance the watermark: usually to no later than the
		// earliest pending element less the lateness, sometimes past it.
		if rng.IntN(3) == 0 {
			next := r.wm + int64(rng.IntN(8))
			if len(pending) > 0 && rng.IntN(5) > 0 {
				earliest := slices.MinFunc(pending, func(a, b event) int { return cmp.Compare(a.Time, b.Time) }).Time
				next = min(next, earliest-cfg.Rules.Lateness)
			}
			r.wm = max(r.wm, next)
		}
		if len(pending) == 0 {
			r.wm += 5
		}
		// One bundle: a few steps, elements or due firings.
		fail := rng.Float64() < 0.15
		saved := map[string]keyStore{}
		for k, s := range r.stores {
			saved[k] = s.clone()
		}
		var out []func()
		fn.StartBundle(nil, nil, nil)
		steps := 1 + rng.IntN(4)
		var ran []event
		for range steps {
			if due := r.due(); len(due) > 0 && (len(pending) == 0 || rng.IntN(2) == 0) {
				d := due[rng.IntN(len(due))]
				s := store(d.key)
				emit := r.emit(&out, d.key, 0) // the firing's own hold counts
				delete(s.tm, d.t.Tag)
				trace(t, "wm %d fire %s %+v", r.wm, d.key, d.t)
				err := fn.OnTimer(ctx, window.GlobalWindow{}, beam.EventTime(d.t.HoldTimestamp), s.st, s.tm, d.key, timers.Context{Family: d.t.Family, Tag: d.t.Tag},
					emit, func(beam.EventTime, beam.X, raw.Encoded) { t.Fatal("a firing emitted a late element") }, r.emitFate(&out))
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			if len(pending) == 0 {
				break
			}
			e := pending[0]
			pending = pending[1:]
			ran = append(ran, e)
			s := store(e.Key)
			trace(t, "wm %d element %s timers %v", r.wm, e.value(), s.tm)
			onTime := e.Time >= r.wm-cfg.Rules.Lateness
			if !onTime {
				r.behind[e.value()] = true
			}
			err := fn.ProcessElement(ctx, window.GlobalWindow{}, beam.EventTime(e.Time), s.st, s.tm, e.Key, raw.Encoded{Side: uint8(e.Input), Value: []byte(e.value())},
				r.emit(&out, e.Key, cfg.Rules.Lateness), func(_ beam.EventTime, _ beam.X, in raw.Encoded) {
					out = append(out, func() { r.late[string(in.Value)] = true })
					if onTime {
						r.problems = append(r.problems, fmt.Sprintf("%s judged late, on time at watermark %d", in.Value, r.wm))
					}
				}, r.emitFate(&out))
			if err != nil {
				t.Fatal(err)
			}
		}
		if fail {
			// The bundle fails: its writes and outputs are discarded, its
			// elements come again, to a fresh instance.
			r.stores = saved
			trace(t, "bundle failed")
			pending = append(ran, pending...)
			fn = newFn()
			continue
		}
		if err := fn.FinishBundle(nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			o()
		}
		if rng.IntN(4) == 0 {
			fn = newFn() // the keys move to another worker
		}
	}
	for k, s := range r.stores {
		if len(s.st.bag) > 0 || len(s.tm) > 0 {
			r.problems = append(r.problems, fmt.Sprintf("key %s keeps state after the end: %d chunks, timers %v", k, len(s.st.bag), slices.Collect(maps.Keys(s.tm))))
		}
	}
	return r
}

// emit collects rows, and checks them against the output watermark: a
// row an arrival makes (slack: the allowed lateness) may be behind it by
// the allowed lateness, as the arriving element may; a retraction or a
// row a firing makes never is. A row with an element that came behind
// the watermark (on a key with no progress, so not late) may be behind it
// too, as any DoFn's output of late input.
func (r *run) emit(out *[]func(), key string, slack int64) func(beam.EventTime, beam.X, Row) {
	hold := r.outputWatermark()
	return func(et beam.EventTime, _ beam.X, row Row) {
		k := rowKey(key, row)
		allowed := hold - slack
		if row.Kind == KindRetract {
			allowed = hold
		}
		behind := false
		for _, v := range row.Values {
			behind = behind || r.behind[string(v)]
		}
		if et.Milliseconds() < allowed && !behind {
			r.problems = append(r.problems, fmt.Sprintf("row %s at %d is behind the output watermark %d", k, et.Milliseconds(), hold))
		}
		*out = append(*out, func() {
			if row.Kind == KindRetract {
				r.rows[k]--
				if r.rows[k] < 0 {
					r.problems = append(r.problems, "retraction of a row not emitted: "+k)
				}
				return
			}
			r.rows[k]++
			r.emitted[k]++
		})
	}
}

func (r *run) emitFate(out *[]func()) func(beam.EventTime, beam.X, raw.FateRecord) {
	return func(et beam.EventTime, key beam.X, f raw.FateRecord) {
		v := fmt.Sprintf("%s/%d@%d", key, f.Side, et.Milliseconds())
		*out = append(*out, func() {
			if old, ok := r.fates[v]; ok {
				r.problems = append(r.problems, fmt.Sprintf("%s has two fates, %v and %v", v, old, match.Fate(f.Outcome)))
			}
			r.fates[v] = match.Fate(f.Outcome)
		})
	}
}

// outputWatermark is the input watermark held back by the timers' holds.
func (r *run) outputWatermark() int64 {
	w := r.wm
	for _, s := range r.stores {
		for _, t := range s.tm {
			w = min(w, t.HoldTimestamp.Milliseconds())
		}
	}
	return w
}

type dueTimer struct {
	key string
	t   timers.TimerMap
}

func (r *run) due() []dueTimer {
	var out []dueTimer
	for _, k := range slices.Sorted(maps.Keys(r.stores)) {
		tm := r.stores[k].tm
		for _, tag := range slices.Sorted(maps.Keys(tm)) {
			if tm[tag].FireTimestamp.Milliseconds() <= r.wm {
				out = append(out, dueTimer{k, tm[tag]})
			}
		}
	}
	return out
}

func (r *run) hasDue() bool {
	for _, s := range r.stores {
		if len(s.tm) > 0 {
			return true
		}
	}
	return false
}

// genCase draws a join and its events.
func genCase(rng *rand.Rand) (Config, []event) {
	n := 3 + rng.IntN(2)
	rules := Rules{Inputs: make([]Input, n), Emit: match.Emit(rng.IntN(3)), Lateness: int64(rng.IntN(3))}
	for i := 1; i < n; i++ {
		lo := int64(rng.IntN(9) - 5)
		rules.Inputs[i] = Input{Lower: lo, Upper: lo + int64(rng.IntN(6)), Optional: rng.IntN(2) == 0}
	}
	cfg := Config{Rules: rules, CleanupEvery: 1 + int64(rng.IntN(4)), Horizon: []int64{0, 7, 40}[rng.IntN(3)], Fates: true, Key: testKeyCoder}
	var events []event
	for _, k := range []string{"a", "b"} {
		for i := range n {
			for range 2 + rng.IntN(4) {
				events = append(events, event{Key: k, Input: i, Time: int64(rng.IntN(25))})
			}
		}
	}
	// Duplicate values would be indistinguishable: make each event's
	// time unique per key and input by dropping repeats.
	slices.SortFunc(events, func(a, b event) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), a.Input-b.Input, cmp.Compare(a.Time, b.Time))
	})
	return cfg, slices.Compact(events)
}

// TestRunnerModel checks the DoFn against the oracle under random
// schedules: EmitFinal's rows are the oracle's, EmitRetract's net to
// them, EmitImmediate's hold each of them once plus rows with an absent
// optional input; no element on time is late; every element has one
// fate, the oracle's; no key keeps state or timers at the end; and
// EmitFinal's rows are never behind the output watermark.
func TestRunnerModel(t *testing.T) {
	var late, rows, total int
	defer func() { t.Logf("%d elements, %d late, %d rows", total, late, rows) }()
	seeds := uint64(600)
	if testing.Short() {
		seeds = 100
	}
	if n, err := strconv.ParseUint(os.Getenv("BEAMJOIN_MODEL_CASES"), 10, 64); err == nil && n > 0 {
		seeds = n // as package join's harness: more cases (make fuzz)
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 1))
		cfg, events := genCase(rng)
		r := play(t, cfg, events, rng)
		var taken []event
		for _, e := range events {
			if !r.late[e.value()] {
				taken = append(taken, e)
			}
		}
		want, fates := oracle(cfg.Rules, taken)
		total, late = total+len(events), late+len(events)-len(taken)
		for _, n := range want {
			rows += n
		}
		problems := r.problems
		net := map[string]int{}
		for k, n := range r.rows {
			if n != 0 {
				net[k] = n
			}
		}
		switch cfg.Rules.Emit {
		case match.Final, match.Retract:
			if d := gocmp.Diff(want, net, cmpopts.EquateEmpty()); d != "" {
				problems = append(problems, "rows (-oracle +join):\n"+d)
			}
		case match.Immediate:
			for k, n := range want {
				if r.emitted[k] != n {
					problems = append(problems, fmt.Sprintf("row %s emitted %d times, the oracle has it %d times", k, r.emitted[k], n))
				}
			}
			for k := range r.emitted {
				if want[k] == 0 && !strings.Contains(k, " -") {
					problems = append(problems, "row not in the oracle and with every input present: "+k)
				}
			}
		}
		for _, e := range events {
			f, ok := r.fates[e.value()]
			wantFate := fates[e.value()]
			if r.late[e.value()] {
				wantFate = match.Late
			}
			if !ok || f != wantFate {
				problems = append(problems, fmt.Sprintf("%s: fate %v (given %v), want %v", e.value(), f, ok, wantFate))
			}
		}
		if len(problems) > 0 {
			t.Fatalf("seed %d, rules %+v, cleanup every %d, horizon %d:\n%s", seed, cfg.Rules, cfg.CleanupEvery, cfg.Horizon, strings.Join(problems, "\n"))
		}
	}
}
