package pricing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/pricing"
)

// Price the sample orders at the rate valid at each order's time, and
// list the orders that no rate prices.
func Example() {
	dir, _ := os.MkdirTemp("", "pricing")
	defer os.RemoveAll(dir)
	c := pricing.Config("../../testdata/pricing/orders.jsonl", "../../testdata/pricing/rates.jsonl", 0)
	c.Out = filepath.Join(dir, "priced.jsonl")
	if _, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := os.ReadFile(c.Out)
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Kind string
			Left struct {
				OrderID string `json:"order_id"`
				USD     float64
			}
			Right *struct {
				PerUSD float64 `json:"per_usd"`
				TS     int64
			}
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			fmt.Println(err)
			return
		}
		if r.Right == nil {
			fmt.Printf("%s: no rate\n", r.Left.OrderID)
			continue
		}
		fmt.Printf("%s: %.0f USD = %.2f at the rate of %d\n", r.Left.OrderID, r.Left.USD, r.Left.USD*r.Right.PerUSD, r.Right.TS)
	}
	// Output:
	// o2: 200 USD = 180.00 at the rate of 1000
	// o3: 300 USD = 270.00 at the rate of 1000
	// o4: 400 USD = 372.00 at the rate of 5000
	// o8: 800 USD = 760.00 at the rate of 9000
	// o5: 500 USD = 400.00 at the rate of 2000
	// o6: 600 USD = 468.00 at the rate of 8000
	// o1: no rate
	// o7: no rate
}
