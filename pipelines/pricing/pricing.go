// Package pricing prices orders in the currency rate valid at each order's
// time: an order at t in currency C takes the rate of C with the greatest
// time at or before t. It is a left outer as-of join (join.AsOf) of orders
// with rates, keyed by currency, with final emission, so an order with no
// rate yet (or, with a max age, none recent enough) is reported once as
// unmatched.
//
// The beamjoin command runs it as
//
//	beamjoin asof --left testdata/pricing/orders.jsonl --right testdata/pricing/rates.jsonl \
//		--key currency --time ts --type left
//
// and Config gives the same join to a Go program. The sample data in
// testdata/pricing holds an order before any rate of its currency, one at a
// rate's own time, one a millisecond before the next rate, two EUR rates
// at one time (the greater line wins, whatever the file's order: 0.93),
// and an order in a currency with no rate.
package pricing

import (
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Config returns the pricing of the orders in the files matched by orders
// with the rates in the files matched by rates. Both are JSON lines with
// the fields currency and ts (epoch milliseconds or RFC 3339). A maxAge
// above zero accepts only rates at most that old (inclusive); zero accepts
// any. The results go to standard output; set Out, DeadLetter or Late, or
// Replay and WatermarkLag, on the returned Config as needed.
func Config(orders, rates string, maxAge time.Duration) jsonjoin.Config {
	fields := jsonl.Fields{Key: "currency", Time: "ts"}
	return jsonjoin.Config{
		Op:       jsonjoin.AsOf,
		Left:     jsonjoin.Input{Pattern: orders, Fields: fields},
		Right:    jsonjoin.Input{Pattern: rates, Fields: fields},
		Type:     join.LeftOuter,
		Emit:     join.EmitFinal,
		MaxAge:   maxAge,
		LimitAge: maxAge > 0,
	}
}
