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
	register.Function1x1(describeBalance)
}

// describeBalance writes what was ordered and paid on one order in one
// window.
func describeBalance(g join.Group[string, Order, Payment]) string {
	ordered, paid := 0, 0
	for _, o := range g.Left {
		ordered += o.Amount
	}
	for _, p := range g.Right {
		paid += p.Amount
	}
	return fmt.Sprintf("%s [%s,%s) ordered %d, paid %d in %d payment(s)",
		g.Key, g.WindowStart.Format("15:04"), g.WindowEnd.Format("15:04"), ordered, paid, len(g.Right))
}

// The balance of each order, per hour: CoGroup hands a function all the
// orders and all the payments of a key in a window, including a payment
// whose order is not there (o4).
func ExampleCoGroup() {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, orderEvent, beam.Create(s,
		Order{ID: "o1", Amount: 30, At: t0},
		Order{ID: "o2", Amount: 12, At: t0.Add(5 * time.Minute)},
	))
	payments := beam.ParDo(s, paymentEvent, beam.Create(s,
		Payment{OrderID: "o1", Amount: 10, At: t0.Add(10 * time.Minute)},
		Payment{OrderID: "o1", Amount: 20, At: t0.Add(20 * time.Minute)},
		Payment{OrderID: "o2", Amount: 5, At: t0.Add(30 * time.Minute)},
		Payment{OrderID: "o4", Amount: 7, At: t0.Add(40 * time.Minute)},
	))

	groups := join.CoGroup[string, Order, Payment](s, orders, payments,
		join.WindowInto(window.NewFixedWindows(time.Hour))).Records
	lines := beam.ParDo(s, describeBalance, groups)

	got := gather(s, lines)
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// o1 [09:00,10:00) ordered 30, paid 30 in 2 payment(s)
	// o2 [09:00,10:00) ordered 12, paid 5 in 1 payment(s)
	// o4 [09:00,10:00) ordered 0, paid 7 in 1 payment(s)
}
