package join_test

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function1x1(describePaidInWindow)
}

func describePaidInWindow(r join.WindowResult[string, Order, Payment]) string {
	hour := fmt.Sprintf("[%s,%s)", r.WindowStart.Format("15:04"), r.WindowEnd.Format("15:04"))
	if r.Kind == join.KindPair {
		return fmt.Sprintf("%s %s paid %d after %v", hour, r.Key, r.Right.Amount, r.RightTime.Sub(r.LeftTime))
	}
	return fmt.Sprintf("%s %s unpaid", hour, r.Key)
}

// Which orders were paid within the hour they were placed in? A left outer
// window join over hourly windows pairs each order with the payments in its
// window and reports the orders whose window has none.
//
// o2's payment comes 15 minutes after the order but in the next hour, so
// the window join misses it; join.Interval with Between(0, 15*time.Minute)
// would not.
func ExampleWindow() {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, orderEvent, beam.Create(s,
		Order{ID: "o1", Amount: 30, At: t0},
		Order{ID: "o2", Amount: 12, At: t0.Add(50 * time.Minute)},
		Order{ID: "o3", Amount: 99, At: t0.Add(30 * time.Minute)},
	))
	payments := beam.ParDo(s, paymentEvent, beam.Create(s,
		Payment{OrderID: "o1", Amount: 30, At: t0.Add(4 * time.Minute)},
		Payment{OrderID: "o2", Amount: 12, At: t0.Add(65 * time.Minute)},
	))

	paid := join.Window[string, Order, Payment](s, orders, payments,
		join.WindowInto(window.NewFixedWindows(time.Hour)), join.LeftOuter).Records
	lines := beam.ParDo(s, describePaidInWindow, paid)

	got := gather(s, lines)
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// [09:00,10:00) o1 paid 30 after 4m0s
	// [09:00,10:00) o2 unpaid
	// [09:00,10:00) o3 unpaid
}
