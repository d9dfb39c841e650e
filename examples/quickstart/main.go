// Command quickstart is the README's quick start: it reconciles orders with
// their payments in an interval join and prints each order paid or, once
// event time proves no payment can still come, unpaid. It runs on Prism,
// in process, unless --runner says otherwise:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart --runner flink --endpoint localhost:8099 --environment_type LOOPBACK
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Order is a left element: keyed by ID, at its own time.
type Order struct {
	ID string
	At time.Time
}

// Payment is a right element: keyed by the order it pays.
type Payment struct {
	OrderID string
	Amount  int
	At      time.Time
}

func init() {
	join.RegisterTypes[string, Order, Payment]() // the types the join emits
	register.Function1x3(keyOrder)
	register.Function1x3(keyPayment)
	register.Function1x0(printResult)
}

// keyOrder and keyPayment make the join's input: a key, a value and the
// element's event time.
func keyOrder(o Order) (beam.EventTime, string, Order) {
	return beam.EventTime(o.At.UnixMilli()), o.ID, o
}

func keyPayment(p Payment) (beam.EventTime, string, Payment) {
	return beam.EventTime(p.At.UnixMilli()), p.OrderID, p
}

// printResult reads a Result: a pair has both sides, an unmatched record
// only its own.
func printResult(r join.Result[string, Order, Payment]) {
	if r.Kind == join.KindPair {
		fmt.Printf("%s paid %d, %v after the order\n", r.Key, r.Right.Amount, r.RightTime.Sub(r.LeftTime))
	} else {
		fmt.Printf("%s unpaid\n", r.Key)
	}
}

func main() {
	// Prism v2.77 can lose timer work when it splits a bundle of a stateful
	// DoFn (apache/beam#35771): turn its splitting off, unless set otherwise.
	flag.Set("experiments", "prism_disable_sdf_split")
	flag.Parse()
	beam.Init()

	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, keyOrder, beam.Create(s,
		Order{"o1", t0}, Order{"o2", t0.Add(time.Minute)}, Order{"o3", t0.Add(2 * time.Minute)}))
	payments := beam.ParDo(s, keyPayment, beam.Create(s,
		Payment{"o1", 30, t0.Add(4 * time.Minute)},
		Payment{"o3", 99, t0.Add(40 * time.Minute)})) // too late for o3

	out := join.Interval[string, Order, Payment](s, orders, payments,
		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
	beam.ParDo0(s, printResult, out.Records)

	if err := beamx.Run(context.Background(), p); err != nil { // Prism unless --runner says otherwise
		log.Fatalf("quickstart: %v", err)
	}
}
