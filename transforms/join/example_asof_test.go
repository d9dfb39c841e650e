package join_test

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Rate is a currency's exchange rate, valid from At until the next one.
type Rate struct {
	Currency string
	PerEuro  float64
	At       time.Time
}

// Purchase is an amount in a currency, at a time.
type Purchase struct {
	ID       string
	Currency string
	Amount   float64
	At       time.Time
}

func init() {
	join.RegisterTypes[string, Purchase, Rate]()
	register.Function1x3(purchaseEvent)
	register.Function1x3(rateEvent)
	register.Function2x0(formatPriced)
}

func purchaseEvent(p Purchase) (beam.EventTime, string, Purchase) {
	return beam.EventTime(p.At.UnixMilli()), p.Currency, p
}

func rateEvent(r Rate) (beam.EventTime, string, Rate) {
	return beam.EventTime(r.At.UnixMilli()), r.Currency, r
}

func formatPriced(r join.Result[string, Purchase, Rate], emit func(string)) {
	if r.Right == nil {
		emit(fmt.Sprintf("%s: no rate", r.Left.ID))
		return
	}
	emit(fmt.Sprintf("%s: %.2f EUR at the rate of %s", r.Left.ID, r.Left.Amount/r.Right.PerEuro, r.RightTime.Format("15:04")))
}

// Price each purchase at the exchange rate valid when it was made: the
// latest rate of its currency at or before its time, at most a day old.
func ExampleAsOf() {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	rates := beam.ParDo(s, rateEvent, beam.Create(s,
		Rate{Currency: "USD", PerEuro: 1.10, At: t0},
		Rate{Currency: "USD", PerEuro: 1.25, At: t0.Add(2 * time.Hour)},
	))
	purchases := beam.ParDo(s, purchaseEvent, beam.Create(s,
		Purchase{ID: "p1", Currency: "USD", Amount: 110, At: t0.Add(time.Hour)},
		Purchase{ID: "p2", Currency: "USD", Amount: 125, At: t0.Add(3 * time.Hour)},
		Purchase{ID: "p3", Currency: "GBP", Amount: 50, At: t0.Add(3 * time.Hour)},
	))
	priced := join.AsOf[string, Purchase, Rate](s, purchases, rates, join.LeftOuter, join.MaxAge(24*time.Hour)).Records
	got := gather(s, beam.ParDo(s, formatPriced, priced))
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// p1: 100.00 EUR at the rate of 09:00
	// p2: 100.00 EUR at the rate of 11:00
	// p3: no rate
}
