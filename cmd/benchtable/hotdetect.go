package main

import (
	"fmt"
	"io"
)

// hotDetect is issue 50's section: the default layout, which finds hot
// keys at run time, against the default layout without detection
// (NoHotKeyDetection, the default before issue 50), every ratio from the
// same run: throughput on ordinary keys (BenchmarkPipeline's
// interval-inner and interval-inner-nodetect, the median of the paired
// runs' ratios), and one hot key among 1000 ordinary ones, its wall time
// per element on Prism (BenchmarkHotKeyAmongOrdinary) and its own state
// bytes per element over the in-memory backend
// (BenchmarkHotKeyAmongOrdinaryState), at 10,000 and 100,000 buffered: the
// same allowed lateness and ordinary keys at both sizes, the hot key ten
// times denser at 100,000 (at 10,000 it stays just under the default
// threshold, in the bag layout).
func hotDetect(w io.Writer, r results, t *targets) {
	pipes := r.matching("BenchmarkPipeline/interval-inner-nodetect/")
	wall := r.matching("BenchmarkHotKeyAmongOrdinary/")
	state := r.matching("BenchmarkHotKeyAmongOrdinaryState/")
	if len(pipes)+len(wall)+len(state) == 0 {
		return
	}
	tb := newTable(w, "Hot keys found at run time: the default layout (detect) against NoHotKeyDetection (the default layout before), same run; (x) = detect over NoHotKeyDetection",
		"figure", "detect", "NoHotKeyDetection", "(x)", "runs")
	// Ordinary keys: the largest N with both pipelines.
	ns := sizes(pipes, "N")
	for i := len(ns) - 1; i >= 0; i-- {
		on := fmt.Sprintf("BenchmarkPipeline/interval-inner/N=%d", ns[i])
		off := fmt.Sprintf("BenchmarkPipeline/interval-inner-nodetect/N=%d", ns[i])
		d, dok := r.median(on, "elem/s")
		b, bok := r.median(off, "elem/s")
		if !dok || !bok {
			continue
		}
		x, _ := r.pairedRatio(on, off, "elem/s")
		tb.row(fmt.Sprintf("ordinary keys (1000 keys, N=%d): elem/s", ns[i]), num(d, true), num(b, true), ratio(x, 1, true), fmt.Sprint(r.runs(on, "elem/s")))
		t.add(fmt.Sprintf("ordinary keys (1000 keys, N=%d): default (hot-key detection) >= 0.95x NoHotKeyDetection elem/s", ns[i]), x >= 0.95, ratio(x, 1, true))
		break
	}
	// One hot key among 1000 ordinary ones, at 10k and 100k buffered.
	for _, f := range []struct {
		bench, unit, label, target string
		scale                      float64
	}{
		{"BenchmarkHotKeyAmongOrdinary", "ns/elem-steady", "hot among 1000 ordinary: us/elem (Prism)",
			"one hot key among 1000 ordinary (default layout): time per element at 100000 buffered <= 1.2x 10000", 1000},
		{"BenchmarkHotKeyAmongOrdinaryState", "hot-state-B/elem", "the hot key's state B/elem (in-memory)",
			"the same hot key (default layout): state bytes per element at 100000 buffered <= 1.2x 10000", 1},
	} {
		at := func(layout string, n int) (float64, bool) {
			return r.median(fmt.Sprintf("%s/%s/buffered=%d", f.bench, layout, n), f.unit)
		}
		shown := false
		for _, n := range []int{10_000, 100_000} {
			d, dok := at("detect", n)
			b, bok := at("bag", n)
			if dok || bok {
				runs := r.runs(fmt.Sprintf("%s/detect/buffered=%d", f.bench, n), f.unit)
				tb.row(fmt.Sprintf("%s @%d buffered", f.label, n), num(d/f.scale, dok), num(b/f.scale, bok), ratio(d, b, dok && bok), fmt.Sprint(runs))
				shown = true
			}
		}
		if !shown {
			continue
		}
		dlo, lok := at("detect", 10_000)
		dhi, hok := at("detect", 100_000)
		blo, blok := at("bag", 10_000)
		bhi, bhok := at("bag", 100_000)
		tb.row("  100000 vs 10000 buffered", ratio(dhi, dlo, lok && hok), ratio(bhi, blo, blok && bhok), "", "")
		if lok && hok {
			t.add(f.target, dhi/dlo <= 1.2, ratio(dhi, dlo, true))
		}
	}
	tb.flush()
}
