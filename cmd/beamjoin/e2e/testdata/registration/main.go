// Command registration is a pipeline of one's own that runs an interval
// join with its workers wherever the Beam flags put them, and writes the
// join's records to --out, one line each. It calls join.RegisterTypes in
// init only when built with the tag "register", so that
// TestE2ERegistrationWithWorkerProcess can show both what a program that
// forgets the call gets and what one that makes it gets.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Order is a left element, keyed by its ID.
type Order struct {
	ID string
	At time.Time
}

// Payment is a right element, keyed by the order it pays.
type Payment struct {
	OrderID string
	Amount  int
	At      time.Time
}

func init() {
	register.Function1x3(keyOrder)
	register.Function1x3(keyPayment)
	register.Function1x1(formatResult)
}

func keyOrder(o Order) (beam.EventTime, string, Order) {
	return beam.EventTime(o.At.UnixMilli()), o.ID, o
}

func keyPayment(p Payment) (beam.EventTime, string, Payment) {
	return beam.EventTime(p.At.UnixMilli()), p.OrderID, p
}

// formatResult writes a record as "kind key amount after".
func formatResult(r join.Result[string, Order, Payment]) string {
	if r.Kind == join.KindPair {
		return fmt.Sprintf("%v %s %d %v", r.Kind, r.Key, r.Right.Amount, r.RightTime.Sub(r.LeftTime))
	}
	return fmt.Sprintf("%v %s", r.Kind, r.Key)
}

func main() {
	out := flag.String("out", "", "file to write the records to")
	flag.Set("experiments", "prism_disable_sdf_split")
	flag.Parse()
	beam.Init() // a worker process runs here and never returns

	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	orders := beam.ParDo(s, keyOrder, beam.Create(s,
		Order{"o1", t0}, Order{"o2", t0.Add(time.Minute)}, Order{"o3", t0.Add(2 * time.Minute)}))
	payments := beam.ParDo(s, keyPayment, beam.Create(s,
		Payment{"o1", 30, t0.Add(4 * time.Minute)},
		Payment{"o3", 99, t0.Add(40 * time.Minute)}))
	res, err := join.TryInterval[string, Order, Payment](s, orders, payments,
		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
	if err != nil {
		fmt.Fprintln(os.Stderr, "registration:", err)
		os.Exit(3)
	}
	textio.Write(s, *out, beam.ParDo(s, formatResult, res.Records))
	if _, err := prism.Execute(context.Background(), p); err != nil {
		fmt.Fprintln(os.Stderr, "registration:", err)
		os.Exit(1)
	}
}
