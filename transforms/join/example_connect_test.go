package join_test

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function3x1(describeOrderEvent)
}

// describeOrderEvent is where a stateful DoFn of the caller's own would
// act on each order and payment of a key; here it only says what it sees.
func describeOrderEvent(et beam.EventTime, id string, ev join.Tagged[Order, Payment]) string {
	at := et.ToTime().UTC().Format("15:04")
	if ev.Side == join.Left {
		return fmt.Sprintf("%s %s order of %d", id, at, ev.Left.Amount)
	}
	return fmt.Sprintf("%s %s payment of %d", id, at, ev.Right.Amount)
}

// Connect merges orders and payments into one stream keyed by order ID,
// each element tagged with its side and keeping its event time, for a
// stateful DoFn that sees both sides of a key. Package
// pipelines/ordertimeout has such a DoFn: it raises an alert for an order
// that is not paid in time.
func ExampleConnect() {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, orderEvent, beam.Create(s,
		Order{ID: "o1", Amount: 30, At: t0},
		Order{ID: "o2", Amount: 12, At: t0.Add(time.Minute)},
	))
	payments := beam.ParDo(s, paymentEvent, beam.Create(s,
		Payment{OrderID: "o1", Amount: 30, At: t0.Add(4 * time.Minute)},
	))

	events := join.Connect[string, Order, Payment](s, orders, payments)
	lines := beam.ParDo(s, describeOrderEvent, events)

	got := gather(s, lines)
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// o1 09:00 order of 30
	// o1 09:04 payment of 30
	// o2 09:01 order of 12
}
