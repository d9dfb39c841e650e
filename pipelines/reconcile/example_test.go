package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/reconcile"
)

// Reconcile the sample orders and payments, and list the first unpaid
// orders.
func Example() {
	dir, _ := os.MkdirTemp("", "reconcile")
	defer os.RemoveAll(dir)
	c := reconcile.Config("../../testdata/orders.jsonl", "../../testdata/payments.jsonl")
	c.Out = filepath.Join(dir, "reconciled.jsonl")
	sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := os.ReadFile(c.Out)
	var unpaid []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, `{"kind":"unmatched"`) {
			unpaid = append(unpaid, l[strings.Index(l, `"key":`)+6:strings.Index(l, `,"left"`)])
		}
	}
	fmt.Println("payments:", strings.Count(string(out), `{"kind":"pair"`))
	fmt.Println("unpaid orders:", len(unpaid), "first:", strings.Join(unpaid[:4], " "))
	fmt.Println("bad lines:", sum.Counts["left_invalid"], "orders,", sum.Counts["right_invalid"], "payments")
	// Output:
	// payments: 203
	// unpaid orders: 30 first: "o-0004" "o-0011" "o-0015" "o-0020"
	// bad lines: 1 orders, 2 payments
}
