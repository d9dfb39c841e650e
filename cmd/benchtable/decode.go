package main

// The section of the interval join's record decoding (BenchmarkResultDecode):
// records of a fan-out join decoded into Results with the cache of the last
// value on each side, against the same records decoded without it.

import "io"

func resultDecode(w io.Writer, r results, t *targets) {
	const prefix = "BenchmarkResultDecode/"
	if len(r.matching(prefix)) == 0 {
		return
	}
	tb := newTable(w, "Interval's records decoded into Results, 100 left values with 46 partners each: with the last-value cache against without it; (x) = ns/record over uncached's, median of the runs' ratios",
		"decoding", "ns/record", "(x)", "B/op", "allocs/op", "runs")
	for _, d := range []string{"uncached", "cached"} {
		name := prefix + d
		if r[name] == nil {
			continue
		}
		ns, ok := r.median(name, "ns/record")
		x, xok := r.pairedRatio(name, prefix+"uncached", "ns/record")
		bytes, bok := r.median(name, "B/op")
		allocs, aok := r.median(name, "allocs/op")
		tb.row(d, num(ns, ok), ratio(x, 1, xok), count(bytes, bok), count(allocs, aok), count(float64(r.runs(name, "ns/record")), true))
		if d == "cached" && xok {
			t.add("Result decoding with the last-value cache: faster than without it on a fan-out join's records", x < 1, ratio(x, 1, true))
		}
	}
	tb.flush()
}
