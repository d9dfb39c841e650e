package match_test

import (
	"fmt"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// A left outer join in which a payment (right) belongs to an order (left) if
// it comes 0 to 15 minutes after it, reporting unpaid orders once cleanup
// proves no payment can still come.
func Example() {
	rules := match.Rules{
		Bounds: match.Between(0, 15*time.Minute),
		Type:   match.LeftOuter,
		Emit:   match.Final,
	}
	if err := rules.Validate(); err != nil {
		panic(err)
	}
	min := int64(time.Minute / time.Millisecond)
	buf := match.NewBuffer[string]()

	buf.Add(rules, match.Entry[string]{Side: match.Left, Time: 0, Value: "order-1"})
	buf.Add(rules, match.Entry[string]{Side: match.Left, Time: 1 * min, Value: "order-2"})
	a := buf.Add(rules, match.Entry[string]{Side: match.Right, Time: 15*min + 30000, Value: "payment-1"})
	for _, p := range a.Partners {
		fmt.Println("pair:", p.Value, "+ payment-1")
	}

	// The watermark passes 17 minutes: both orders' cleanup times have come.
	for _, e := range buf.Expire(rules, 17*min) {
		if rules.UnmatchedOnRemoval(e.Side, e.Matched) {
			fmt.Println("unmatched:", e.Value)
		}
	}
	// A payment at 1 minute could have matched an order already cleaned up.
	fmt.Println("late:", buf.Add(rules, match.Entry[string]{Side: match.Right, Time: 1 * min}).Late)
	// Output:
	// pair: order-2 + payment-1
	// unmatched: order-1
	// late: true
}
