package ordertimeout_test

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/ordertimeout"
)

func init() {
	register.Function1x2(orderAt)
	register.Function1x2(paymentAt)
	register.Function1x1(describeUnpaid)
}

// placedOrder and madePayment carry the event times of the example's
// inputs; a real pipeline's source sets element timestamps itself.
type placedOrder struct {
	Order ordertimeout.Order
	At    time.Time
}

type madePayment struct {
	Payment ordertimeout.Payment
	At      time.Time
}

func orderAt(o placedOrder) (beam.EventTime, ordertimeout.Order) {
	return beam.EventTime(o.At.UnixMilli()), o.Order
}

func paymentAt(p madePayment) (beam.EventTime, ordertimeout.Payment) {
	return beam.EventTime(p.At.UnixMilli()), p.Payment
}

func describeUnpaid(a ordertimeout.Alert) string {
	return fmt.Sprintf("%s: %s's order of %.2f placed at %s is not paid by %s", a.Order.ID, a.Order.Customer,
		float64(a.Order.Amount)/100, a.Placed.Format("15:04"), a.Deadline.Format("15:04"))
}

// Orders must be paid within 15 minutes. o1 is paid after 4 minutes; o2 is
// never paid; o3 is paid after 40 minutes, too late.
func Example() {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, orderAt, beam.Create(s,
		placedOrder{ordertimeout.Order{ID: "o1", Customer: "ann", Amount: 3000}, t0},
		placedOrder{ordertimeout.Order{ID: "o2", Customer: "bob", Amount: 1250}, t0.Add(time.Minute)},
		placedOrder{ordertimeout.Order{ID: "o3", Customer: "cy", Amount: 9900}, t0.Add(2 * time.Minute)},
	))
	payments := beam.ParDo(s, paymentAt, beam.Create(s,
		madePayment{ordertimeout.Payment{OrderID: "o1", Amount: 3000}, t0.Add(4 * time.Minute)},
		madePayment{ordertimeout.Payment{OrderID: "o3", Amount: 9900}, t0.Add(42 * time.Minute)},
	))

	alerts := ordertimeout.Alerts(s, orders, payments, 15*time.Minute)

	got := gather(s, beam.ParDo(s, describeUnpaid, alerts))
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// o2: bob's order of 12.50 placed at 09:01 is not paid by 09:16
	// o3: cy's order of 99.00 placed at 09:02 is not paid by 09:17
}
