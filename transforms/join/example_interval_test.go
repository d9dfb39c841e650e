package join_test

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Order and Payment are the example's element types.
type Order struct {
	ID     string
	Amount int
	At     time.Time
}

// Payment pays for an order.
type Payment struct {
	OrderID string
	Amount  int
	At      time.Time
}

func init() {
	// Every program registers the types its joins emit, once per key and
	// value types, in an init function.
	join.RegisterTypes[string, Order, Payment]()
	register.Function1x3(orderEvent)
	register.Function1x3(paymentEvent)
	register.Function2x0(collectReconciled)
	register.Emitter1[string]()
}

// orderEvent keys an order by its ID, at its own event time.
func orderEvent(o Order) (beam.EventTime, string, Order) {
	return beam.EventTime(o.At.UnixMilli()), o.ID, o
}

func paymentEvent(p Payment) (beam.EventTime, string, Payment) {
	return beam.EventTime(p.At.UnixMilli()), p.OrderID, p
}

func collectReconciled(r join.Result[string, Order, Payment], emit func(string)) {
	switch {
	case r.Kind == join.KindPair:
		emit(fmt.Sprintf("%s paid %d after %v", r.Key, r.Right.Amount, r.RightTime.Sub(r.LeftTime)))
	case r.Left != nil:
		emit(fmt.Sprintf("%s unpaid", r.Key))
	}
}

// Reconcile orders with payments: a payment belongs to an order if it comes
// 0 to 15 minutes after it. A left outer join with final emission lists each
// unpaid order once, when event time proves no payment can still come.
func ExampleInterval() {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, orderEvent, beam.Create(s,
		Order{ID: "o1", Amount: 30, At: t0},
		Order{ID: "o2", Amount: 12, At: t0.Add(time.Minute)},
		Order{ID: "o3", Amount: 99, At: t0.Add(2 * time.Minute)},
	))
	payments := beam.ParDo(s, paymentEvent, beam.Create(s,
		Payment{OrderID: "o1", Amount: 30, At: t0.Add(4 * time.Minute)},
		Payment{OrderID: "o3", Amount: 99, At: t0.Add(40 * time.Minute)}, // too late for o3
	))

	results := join.Interval[string, Order, Payment](s, orders, payments,
		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal).Records
	lines := beam.ParDo(s, collectReconciled, results)

	got := gather(s, lines)
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// o1 paid 30 after 4m0s
	// o2 unpaid
	// o3 unpaid
}

// An order's ID is its identity, so the orders input has one element per
// key: UniqueLeft says so, and the join then holds no payment that arrives
// while its order is held (it is joined at once). The records are those of
// the join without it.
func ExampleUniqueLeft() {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, orderEvent, beam.Create(s,
		Order{ID: "o1", Amount: 30, At: t0},
		Order{ID: "o2", Amount: 12, At: t0.Add(time.Minute)},
	))
	payments := beam.ParDo(s, paymentEvent, beam.Create(s,
		Payment{OrderID: "o1", Amount: 10, At: t0.Add(4 * time.Minute)},
		Payment{OrderID: "o1", Amount: 20, At: t0.Add(6 * time.Minute)},
	))

	results := join.Interval[string, Order, Payment](s, orders, payments,
		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal, join.UniqueLeft()).Records
	got := gather(s, beam.ParDo(s, collectReconciled, results))
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// o1 paid 10 after 4m0s
	// o1 paid 20 after 6m0s
	// o2 unpaid
}
