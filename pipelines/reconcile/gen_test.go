// This file generates the sample orders and payments in testdata/, and
// checks that the committed files are what it generates:
//
//	go test ./pipelines/reconcile -run TestTestdata -generate

package reconcile_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/internal/sampledata"
)

func TestTestdata(t *testing.T) {
	orders, payments := generateOrdersPayments()
	sampledata.Check(t, map[string][]byte{"orders.jsonl": orders, "payments.jsonl": payments})
}

type payment struct {
	order  string
	amount float64
	method string
	ts     int64 // event time, epoch ms
	line   int64 // position in the file: when it was written
	id     string
}

// generateOrdersPayments returns orders.jsonl and payments.jsonl.
func generateOrdersPayments() (orders, payments []byte) {
	rng := rand.New(rand.NewPCG(2024, 5))
	base := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC).UnixMilli()
	const sec, min = int64(1000), int64(60000)
	uniform := func(lo, hi int64) int64 { return lo + rng.Int64N(hi-lo+1) }
	methods := []string{"card", "card", "card", "transfer", "cash"}

	type order struct {
		id       string
		customer string
		amount   float64
		ts       int64
	}
	var ords []order
	var ps []*payment
	pay := func(o order, delay int64, amount float64) *payment {
		p := &payment{order: o.id, amount: amount, method: methods[rng.IntN(len(methods))], ts: o.ts + delay}
		p.line = p.ts
		ps = append(ps, p)
		return p
	}
	for i := 1; i <= 200; i++ {
		o := order{
			id:       fmt.Sprintf("o-%04d", i),
			customer: fmt.Sprintf("c-%02d", 1+rng.IntN(40)),
			amount:   float64(500+rng.IntN(20000)) / 100,
			ts:       base + int64(i-1)*90*sec + uniform(0, 60)*sec,
		}
		ords = append(ords, o)
		switch i {
		case 5: // paid at the very instant of the order: lower bound 0 is inclusive
			pay(o, 0, o.amount)
			continue
		case 10: // paid exactly 15 minutes later: the upper bound is inclusive
			pay(o, 15*min, o.amount)
			continue
		case 15: // one millisecond too late: unpaid
			pay(o, 15*min+1, o.amount)
			continue
		case 20: // one millisecond before the order: not its payment
			pay(o, -1, o.amount)
			continue
		}
		switch r := rng.Float64(); {
		case r < 0.70: // paid once
			p := pay(o, uniform(20, 870)*sec, o.amount)
			if i%23 == 0 {
				// Written to the file 27 minutes after the order: it joins in
				// batch, but replayed with a watermark lag under 12 minutes
				// it comes after its order's cleanup and is late.
				p.line = o.ts + 27*min
			}
		case r < 0.78: // a duplicate payment
			d := uniform(20, 780) * sec
			pay(o, d, o.amount)
			pay(o, d+uniform(2, 90)*sec, o.amount)
		case r < 0.86: // paid in two parts
			d := uniform(20, 600) * sec
			half := float64(int(o.amount*50)) / 100
			pay(o, d, half)
			pay(o, d+uniform(30, 240)*sec, o.amount-half)
		case r < 0.94: // unpaid
		default: // paid too late
			pay(o, uniform(16, 50)*min, o.amount)
		}
	}
	for i := 1; i <= 3; i++ { // payments for orders that do not exist
		o := order{id: fmt.Sprintf("o-90%02d", i), ts: base + uniform(10, 280)*min}
		pay(o, 0, float64(1000+rng.IntN(5000))/100)
	}

	// Orders are written in time order, but every 37th pair of lines is
	// swapped: a little disorder, well within any sensible lag.
	sort.SliceStable(ords, func(i, j int) bool { return ords[i].ts < ords[j].ts })
	for i := 36; i+1 < len(ords); i += 37 {
		ords[i], ords[i+1] = ords[i+1], ords[i]
	}
	var ob bytes.Buffer
	for i, o := range ords {
		if i == 120 {
			ob.WriteString(`{"order_id":"o-0999","customer":"c-07","amount":19.99,"ts":"yesterday"}` + "\n")
		}
		fmt.Fprintf(&ob, `{"order_id":%q,"customer":%q,"amount":%.2f,"ts":%q}`+"\n",
			o.id, o.customer, o.amount, time.UnixMilli(o.ts).UTC().Format(time.RFC3339))
	}

	// Payment ids follow event time; lines follow the time each payment
	// was written.
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].ts < ps[j].ts })
	for i, p := range ps {
		p.id = fmt.Sprintf("p-%04d", i+1)
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].line < ps[j].line })
	var pb bytes.Buffer
	for i, p := range ps {
		switch i {
		case 60:
			pb.WriteString(`{"payment_id":"p-9999","order_id":"o-0042","amount":` + "\n")
		case 150:
			fmt.Fprintf(&pb, `{"payment_id":"p-refund-1","amount":-5.00,"method":"card","ts":%d}`+"\n", p.ts)
		}
		fmt.Fprintf(&pb, `{"payment_id":%q,"order_id":%q,"amount":%.2f,"method":%q,"ts":%d}`+"\n",
			p.id, p.order, p.amount, p.method, p.ts)
	}
	return ob.Bytes(), pb.Bytes()
}
