package main

import (
	"fmt"
	"strings"
)

// The core section of the table, from two benchmark lines as `go test
// -bench` prints them: the core's speed-up over the nested loop is computed
// from the same run.
func Example_core() {
	raw := `BenchmarkArrival/buffered=100/core-2           9000000   130 ns/op   112 B/op   1 allocs/op
BenchmarkArrival/buffered=100/nested-loop-2     650000    184 ns/op     0 B/op   0 allocs/op
`
	r, err := parse(strings.NewReader(raw))
	if err != nil {
		panic(err)
	}
	var out strings.Builder
	core(&out, r, &targets{})
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		fmt.Println(strings.TrimRight(line, " "))
	}
	// Output:
	// Matching core (match.Buffer), one key, per arriving element with one partner; median of runs
	// buffered  core ns/op  B/op  allocs/op  nested loop ns/op  core speed-up  runs
	// 100       130         112   1.00       184                1.42x          1
}
