package join

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// holdError runs f and returns the error of a timer it set with an output
// timestamp after its firing time (memTimers.Set panics with it), or nil.
func holdError(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok || !errors.Is(e, errHoldAfterFiring) {
				panic(r)
			}
			err = e
		}
	}()
	f()
	return nil
}

// TestTimerHoldsNotAfterFiring sets every stateful DoFn's timers where the
// hold it wants is later than its firing time: an outer element whose
// cleanup or final record is far later than the key's earliest expiry (a
// future-dated left element beside an old right one). Beam Java's SDK
// refuses a timer whose output timestamp is after its firing time; every
// timer must hold at or before it fires (the harness's timers check each
// one they are given).
func TestTimerHoldsNotAfterFiring(t *testing.T) {
	outerFinal := match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.LeftOuter, Emit: match.Final}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"interval_bag_layout", func(t *testing.T) {
			h := newHarness(t, outerFinal, time.Millisecond, 0)
			h.startBundle()
			h.element(Right, 0, "k", "r0")
			h.element(Left, 100_000, "k", "l100") // far later than r0's expiry
			h.finishBundle()
			fireAll(t, h, func(key string, tm timers.TimerMap) { h.fire(key, tm) })
		}},
		{"interval_split_layout", func(t *testing.T) {
			h := newSplitHarness(t, outerFinal, time.Millisecond, time.Minute, 0)
			h.startBundle()
			h.element(Right, 70_000, "k", "r70") // in l100's bucket [60 s, 120 s), expiring first
			h.element(Left, 100_000, "k", "l100")
			h.finishBundle()
			fireAll(t, h, func(key string, tm timers.TimerMap) { h.fireSplit(key, tm) })
		}},
		{"windowed", func(t *testing.T) {
			fn := &windowedFn{Rules: panes.Rules{Windowing: panes.Windowing{Kind: panes.Fixed, Size: 10_000}}, Join: true, Type: match.LeftOuter, Buffer: state.MakeBagState[[]byte]("buffer"), Fire: timers.InEventTime("fire")}
			ctx := metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "harness"), "window")
			sp, tp := newMemState(), memTimers{}
			for _, ms := range []int64{100_000, 0} {
				if err := fn.ProcessElement(ctx, beam.EventTime(ms), sp, tp, "k", raw.Encoded{Side: uint8(Left), Value: []byte(fmt.Sprint(ms))}, nil, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			for len(tp) > 0 {
				var next timers.TimerMap
				for _, tm := range tp {
					if next.Tag == "" || tm.FireTimestamp < next.FireTimestamp {
						next = tm
					}
				}
				delete(tp, next.Tag)
				noEmit := func(beam.EventTime, beam.X, paneRecord) {}
				if err := fn.OnTimer(ctx, beam.EventTime(next.HoldTimestamp), sp, tp, "k", timers.Context{Family: next.Family, Tag: next.Tag},
					noEmit, func(beam.EventTime, beam.X, missedRecord) {}, func(beam.EventTime, beam.X, fateRecord) {}); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := holdError(func() { tc.run(t) }); err != nil {
				t.Error(err)
			}
		})
	}
}

// fireAll fires h's timers in firing order, those that firings set too,
// until none is left.
func fireAll(t *testing.T, h *harness, fire func(key string, tm timers.TimerMap)) {
	t.Helper()
	for range 1000 {
		var key string
		var next timers.TimerMap
		found := false
		for k, tp := range h.timers {
			for _, tm := range tp {
				if !found || tm.FireTimestamp < next.FireTimestamp {
					key, next, found = k, tm, true
				}
			}
		}
		if !found {
			return
		}
		h.startBundle()
		fire(key, next)
		h.finishBundle()
	}
	t.Fatal("timers still set after 1000 firings")
}
