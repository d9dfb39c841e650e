package main

// The multi-way join's section (issue 51): a three-way join in one
// join.Multi step against the same join as two chained join.Interval
// steps, on the same input (BenchmarkMulti), in two shapes: "one" (each
// element has one partner in each input) and "wide" (each anchor has
// five in each, 25 rows, and the chained joins hand five pairs per anchor
// from the first step to the second).

import (
	"fmt"
	"io"
	"strconv"
)

// multiGoals are issue 51's targets against the chained joins: at least
// this many times their elements/s, and at most this share of what they
// buffer per key. The state is measured as buffered elements, the two
// chained steps' peaks added: the second step's elements are pairs, each
// holding two of the input's values, so the chained joins' bytes are more
// than their element count says, never less.
const (
	multiMinSpeed = 2.0
	multiMaxState = 0.5
)

func multiWay(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkMulti/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "join.Multi (three inputs, one step) against two chained join.Interval steps, same input; (x) = Multi over the chained joins",
		"shape", "N", "Multi elem/s", "chained elem/s", "(x)", "Multi buffered/key", "chained buffered/key", "(x)", "rows")
	for _, shape := range []string{"one", "wide"} {
		for _, n := range sizes(r.matching("BenchmarkMulti/"+shape+"/"), "N") {
			name := func(p string) string { return fmt.Sprintf("BenchmarkMulti/%s/%s/N=%d", shape, p, n) }
			m, mok := r.median(name("multi-3way"), "elem/s")
			c, cok := r.median(name("chained-interval"), "elem/s")
			mb, mbok := r.median(name("multi-3way"), "max-buffered/key")
			cb, cbok := r.median(name("chained-interval"), "max-buffered/key")
			rows, rok := r.median(name("multi-3way"), "rows")
			tb.row(shape, strconv.Itoa(n), num(m, mok), num(c, cok), ratio(m, c, mok && cok), num(mb, mbok), num(cb, cbok), ratio(mb, cb, mbok && cbok), num(rows, rok))
			if mok && cok {
				t.add(fmt.Sprintf("Multi >= %.0fx the chained joins' elem/s (%s, N=%d)", multiMinSpeed, shape, n), m/c >= multiMinSpeed, ratio(m, c, true))
			}
			if mbok && cbok {
				t.add(fmt.Sprintf("Multi buffers <= %.1fx the chained joins per key (%s, N=%d)", multiMaxState, shape, n), mb/cb <= multiMaxState, ratio(mb, cb, true))
			}
		}
	}
	tb.flush()
}
