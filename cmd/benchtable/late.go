package main

// The sections of the window join's paths against the same join written
// by hand (BenchmarkWindowLate), of the beamjoin command's window join on
// files read whole (BenchmarkBatchWindow), and of issue 9.3's bounded
// bundle cache (BenchmarkIntervalBundleCache).

import (
	"fmt"
	"io"
	"slices"
	"strconv"
)

// windowLateOrder lists the BenchmarkWindowLate pipelines in the order shown.
var windowLateOrder = []string{"window-gbk", "window-gbk-records", "window-grouped", "window-late", "window-fates"}

func windowLate(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkWindowLate/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Window join on a bounded input, 8 s fixed windows: its default path (window-grouped, CoGroupByKey) and its late-counting path (window-late, window-fates: one stateful DoFn per key, a timer per window) against the same join written by hand with CoGroupByKey and a nested loop (window-gbk counts the pairs; window-gbk-records makes records of what Window's hold); (x) = elem/s over window-gbk's, median of the runs' ratios",
		"pipeline", "N", "elem/s", "(x)", "peak live MB", "runs")
	for _, n := range sizes(names, "N") {
		name := func(p string) string { return fmt.Sprintf("BenchmarkWindowLate/%s/N=%d", p, n) }
		for _, p := range windowLateOrder {
			if r[name(p)] == nil {
				continue
			}
			eps, ok := r.median(name(p), "elem/s")
			mem, mok := r.median(name(p), "peak-live-MB")
			x, xok := r.pairedRatio(name(p), name("window-gbk"), "elem/s")
			tb.row(p, strconv.Itoa(n), num(eps, ok), ratio(x, 1, xok), num(mem, mok), strconv.Itoa(r.runs(name(p), "elem/s")))
			if p == "window-grouped" && xok {
				t.add(fmt.Sprintf("window-grouped >= 0.9x the hand-written CoGroupByKey join, bounded input (N=%d)", n), x >= 0.9, ratio(x, 1, true))
			}
		}
	}
	tb.flush()
}

// batchWindow is the section of the beamjoin command's window join on
// files read whole: its CoGroupByKey path against the late-counting path
// it took before.
func batchWindow(w io.Writer, r results, t *targets) {
	const prefix = "BenchmarkBatchWindow/path="
	names := r.matching(prefix)
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "beamjoin window on files read whole (7 min tumbling, inner), each in a process of its own; (x) = time of the late-counting path over this one's",
		"path", "input", "s/run", "(x)", "peak RSS MB", "runs")
	for _, in := range inputsOf(names, prefix) {
		late, lok := runRows(tb, r, prefix, in, []string{"window-grouped", "window-late"}, "window-late")
		if g, ok := r.median(prefix+"window-grouped"+in, "s/run"); ok && lok {
			t.add(fmt.Sprintf("beamjoin window on files read whole (%s): >= 4x faster than the late-counting path", in[1:]), late/g >= 4, ratio(late, g, true))
		}
	}
	tb.flush()
}

// pairedRatio is the median over runs of a's value over b's in unit, the
// i-th run of each paired, when both have the same number of runs (runs
// interleaved, so that each pair saw the same machine load); else the
// ratio of their medians.
func (r results) pairedRatio(a, b, unit string) (float64, bool) {
	return median(r.pairedRatios(a, b, unit))
}

// pairedRatios is each run's ratio of a's value over b's in unit, the i-th
// run of each paired, when both have the same number of runs; else the one
// ratio of their medians; none if either has no runs or a zero divides.
func (r results) pairedRatios(a, b, unit string) []float64 {
	as, bs := r[a][unit], r[b][unit]
	if len(as) == 0 || len(bs) == 0 {
		return nil
	}
	if len(as) != len(bs) {
		am, _ := r.median(a, unit)
		bm, _ := r.median(b, unit)
		if bm == 0 {
			return nil
		}
		return []float64{am / bm}
	}
	var rs []float64
	for i := range as {
		if bs[i] == 0 {
			return nil
		}
		rs = append(rs, as[i]/bs[i])
	}
	return rs
}

// median is the median of vs, and whether there are any.
func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2, true
	}
	return vs[len(vs)/2], true
}

// bundleCacheOrder lists the BenchmarkIntervalBundleCache bounds in the
// order shown.
var bundleCacheOrder = []string{"default", "16MiB", "unbounded"}

func bundleCache(w io.Writer, r results, t *targets) {
	if len(r.matching("BenchmarkIntervalBundleCache/")) == 0 {
		return
	}
	tb := newTable(w, "join.Interval's bundle cache: one bundle of 1M elements over 100k keys through the DoFn, in-memory state; heap = live Go heap the cache held at the bundle's end; (x) = heap over the unbounded cache's",
		"bound", "bound MiB", "peak estimate MiB", "heap MiB", "(x)", "hits", "misses")
	name := func(b string) string { return "BenchmarkIntervalBundleCache/" + b }
	unbounded, uok := r.median(name("unbounded"), "cache-heap-MiB")
	for _, b := range bundleCacheOrder {
		if r[name(b)] == nil {
			continue
		}
		bound, bok := r.median(name(b), "cache-bound-MiB")
		peak, pok := r.median(name(b), "cache-peak-MiB")
		heap, hok := r.median(name(b), "cache-heap-MiB")
		hits, hiok := r.median(name(b), "hits")
		misses, mok := r.median(name(b), "misses")
		boundCell := num(bound, bok)
		if b == "unbounded" {
			boundCell = "none"
		}
		tb.row(b, boundCell, num(peak, pok), num(heap, hok), ratio(heap, unbounded, hok && uok), count(hits, hiok), count(misses, mok))
		if b != "unbounded" && bok && hok {
			t.add(fmt.Sprintf("bundle cache (%s): live heap held within its bound plus %.0f MiB (issue 9.3)", b, cacheSlackMiB), heap <= bound+cacheSlackMiB,
				num(heap, true)+" MiB")
		}
	}
	tb.flush()
}

// count formats a whole number of events.
func count(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// cacheSlackMiB is the constant issue 9.3 allows the cache's live heap
// over its bound: the estimate's error on the benchmark's small values.
const cacheSlackMiB = 4.0
