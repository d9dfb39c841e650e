package sampledata_test

import (
	"fmt"
	"os"
	"path/filepath"
)

// The sample inputs Check keeps in step live in the repository's testdata
// folder. A pipeline's gen_test.go generates them and calls Check from its
// TestTestdata:
//
//	func TestTestdata(t *testing.T) {
//		orders, payments := generateOrdersPayments()
//		sampledata.Check(t, map[string][]byte{"orders.jsonl": orders, "payments.jsonl": payments})
//	}
func Example() {
	_, err := os.Stat(filepath.Join("..", "..", "..", "testdata", "orders.jsonl"))
	fmt.Println("orders.jsonl is committed:", err == nil)
	// Output:
	// orders.jsonl is committed: true
}
