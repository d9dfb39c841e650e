package main

// The section of the interval join's record decoding (BenchmarkResultDecode):
// records decoded into Results with the cache of the last value on each
// side, against the same records decoded without it, on a fan-out join's
// records (where the cache saves decodes) and a one-to-one join's (where it
// costs its compare and copy).

import (
	"io"
	"strconv"
)

func resultDecode(w io.Writer, r results, t *targets) {
	const prefix = "BenchmarkResultDecode/"
	if len(r.matching(prefix)) == 0 {
		return
	}
	tb := newTable(w, "Interval's records decoded into Results, 4,600 records: fan-out (100 left values with 46 partners each) and one-to-one; with the last-value cache against without it; (x) = ns/record over uncached's, median of the runs' ratios",
		"records", "decoding", "ns/record", "(x)", "B/op", "allocs/op", "runs")
	for _, shape := range []string{"fan-out", "one-to-one"} {
		for _, d := range []string{"uncached", "cached"} {
			name := prefix + shape + "/" + d
			if r[name] == nil {
				continue
			}
			ns, ok := r.median(name, "ns/record")
			x, xok := r.pairedRatio(name, prefix+shape+"/uncached", "ns/record")
			bytes, bok := r.median(name, "B/op")
			allocs, aok := r.median(name, "allocs/op")
			tb.row(shape, d, num(ns, ok), ratio(x, 1, xok), count(bytes, bok), count(allocs, aok), strconv.Itoa(r.runs(name, "ns/record")))
			switch {
			case d == "uncached" || !xok:
			case shape == "fan-out":
				t.add("Result decoding with the last-value cache: faster than without it on a fan-out join's records", x < 1, ratio(x, 1, true))
			default:
				t.add("Result decoding with the last-value cache: at most 1.1x the time without it where no value repeats", x <= 1.1, ratio(x, 1, true))
			}
		}
	}
	tb.flush()
}
