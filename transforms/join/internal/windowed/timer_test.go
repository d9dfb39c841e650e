package windowed

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/statetest"
)

// TestTimerHoldsNotAfterFiring sets the window join's timers where the
// hold it wants is later than its firing time. Beam Java's SDK refuses a
// timer whose output timestamp is after its firing time; every timer must
// hold at or before it fires (statetest's timers check each one they are
// given). The interval join's and the as-of join's DoFns are checked alike
// in their packages.
func TestTimerHoldsNotAfterFiring(t *testing.T) {
	t.Run("windowed", func(t *testing.T) {
		err := statetest.HoldError(func() {
			fn := &windowedFn{Rules: panes.Rules{Windowing: panes.Windowing{Kind: panes.Fixed, Size: 10_000}}, Join: true, Type: match.LeftOuter, Buffer: state.MakeBagState[[]byte]("buffer"), Fire: timers.InEventTime("fire")}
			ctx := metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "harness"), "window")
			sp, tp := statetest.NewState(), statetest.Timers{}
			for _, ms := range []int64{100_000, 0} {
				if err := fn.ProcessElement(ctx, beam.EventTime(ms), sp, tp, "k", raw.Encoded{Side: uint8(match.Left), Value: []byte(fmt.Sprint(ms))}, nil, nil, nil); err != nil {
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
				noEmit := func(beam.EventTime, beam.X, PaneRecord) {}
				if err := fn.OnTimer(ctx, beam.EventTime(next.HoldTimestamp), sp, tp, "k", timers.Context{Family: next.Family, Tag: next.Tag},
					noEmit, func(beam.EventTime, beam.X, MissedRecord) {}, func(beam.EventTime, beam.X, raw.FateRecord) {}); err != nil {
					t.Fatal(err)
				}
			}
		})
		if err != nil {
			t.Error(err)
		}
	})
}
