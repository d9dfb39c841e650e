package main

// The sections of issue 49, make bench-flink: the Beam joins on Flink
// streaming against the hand-written join, the bag-append floor and
// Flink's own DataStream intervalJoin (BenchmarkFlinkPipeline), and
// Nexmark's Q3, Q8 and winning bids, beamjoin against Beam Java's Nexmark
// on the classic and the portable Flink runner (BenchmarkFlinkQuery), each
// beside the published figures. Ratios are the medians of the rounds'
// paired ratios (make bench-flink runs the rows of a round back to back,
// in alternating order).

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// flinkJoinOrder lists BenchmarkFlinkPipeline's rows in the order shown.
// "-appendeach": the row before write-behind, an append per arrival.
var flinkJoinOrder = []string{"flink-intervaljoin", "bag-append", "handwritten-inner", "interval-inner", "interval-inner-appendeach", "interval-left-final",
	"interval-inner-10keys", "interval-inner-cleanup60s-10keys", "interval-inner-cleanup60s-appendeach-10keys"}

func flinkJoins(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkFlinkPipeline/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Joins on Flink 1.19 streaming (Beam 2.62 job server, parallelism 2, LOOPBACK Go workers; -10keys: the same input over 10 keys instead of 1000; -appendeach: an append per arrival, as before write-behind; cleanup60s: CleanupEvery(1 min)); elem/s over the Flink job's run time; (x) = median of the rounds' paired ratios; state calls are Fn API requests per input element; CPU per element during the job; peak RSS of the JVM and of the Go worker",
		"pipeline", "N", "elem/s", "vs hand-written", "vs bag-append", "vs Flink", "state calls/elem", "get/append/clear", "bundles", "JVM cpu us", "Go cpu us", "JVM MB", "Go MB", "runs")
	for _, n := range sizes(names, "N") {
		name := func(p string) string { return fmt.Sprintf("BenchmarkFlinkPipeline/%s/N=%d", p, n) }
		for _, p := range flinkJoinOrder {
			if r[name(p)] == nil {
				continue
			}
			eps, ok := r.median(name(p), "elem/s")
			vs := func(peer string) string {
				if p == peer || strings.HasSuffix(p, "-10keys") {
					return ""
				}
				x, ok := r.pairedRatio(name(p), name(peer), "elem/s")
				return ratio(x, 1, ok)
			}
			calls, cok := r.median(name(p), "state-calls/elem")
			gets, _ := r.median(name(p), "state-gets/elem")
			apps, _ := r.median(name(p), "state-appends/elem")
			clears, _ := r.median(name(p), "state-clears/elem")
			split := "-"
			if cok {
				split = num(gets, true) + "/" + num(apps, true) + "/" + num(clears, true)
			}
			per, pok := r.median(name(p), "bundles")
			jcpu, jok := r.median(name(p), "jvm-cpu-us/elem")
			gcpu, gok := r.median(name(p), "go-cpu-us/elem")
			jmb, jmok := r.median(name(p), "jvm-peak-RSS-MB")
			gmb, gmok := r.median(name(p), "go-peak-RSS-MB")
			tb.row(p, strconv.Itoa(n), num(eps, ok), vs("handwritten-inner"), vs("bag-append"), vs("flink-intervaljoin"),
				num(calls, cok), split, num(per, pok), num(jcpu, jok), num(gcpu, gok), num(jmb, jmok), num(gmb, gmok), strconv.Itoa(r.runs(name(p), "elem/s")))
		}
		if x, ok := r.pairedRatio(name("interval-inner"), name("handwritten-inner"), "elem/s"); ok {
			t.add(fmt.Sprintf("Flink streaming: Interval inner, defaults, >= 1.5x the hand-written join (N=%d)", n), x >= 1.5, ratio(x, 1, true))
		}
		if calls, ok := r.median(name("interval-inner-cleanup60s-10keys"), "state-calls/elem"); ok {
			t.add("Flink streaming: Interval's state calls per element <= 2, a key with several elements per bundle (the input over 10 keys, CleanupEvery(1 min))", calls <= 2, num(calls, true))
		}
		for _, p := range []string{"interval-inner", "interval-inner-10keys"} {
			if calls, ok := r.median(name(p), "state-calls/elem"); ok {
				t.rows = append(t.rows, [3]string{fmt.Sprintf("Flink streaming: %s's state calls per element (N=%d)", p, n), num(calls, true), "stated"})
			}
		}
		for _, p := range [][2]string{{"interval-inner", "interval-inner-appendeach"}, {"interval-inner-cleanup60s-10keys", "interval-inner-cleanup60s-appendeach-10keys"}} {
			if x, ok := r.pairedRatio(name(p[0]), name(p[1]), "elem/s"); ok {
				t.rows = append(t.rows, [3]string{fmt.Sprintf("Flink streaming: write-behind, %s against %s (N=%d)", p[0], p[1], n), ratio(x, 1, true), "stated"})
			}
		}
		if x, ok := r.pairedRatio(name("interval-inner"), name("flink-intervaljoin"), "elem/s"); ok {
			t.rows = append(t.rows, [3]string{fmt.Sprintf("Flink streaming: Interval inner against Flink's own intervalJoin (N=%d)", n), ratio(x, 1, true), "stated (docs/performance.md, On Flink)"})
		}
	}
	tb.flush()
}

// flinkNexmarkVersions lists BenchmarkFlinkQuery's versions in the order shown.
var flinkNexmarkVersions = []string{"beamjoin", "beam-java-classic", "beam-java-portable"}

// published are the figures issue 49 sets beside ours, events/s per core:
// feldera/feldera's benchmark/README.md ("Sample results", 16 cores,
// 100M events, streaming), Beam's Nexmark on Flink ("Flink on Beam") and
// its Flink column; nexmark/nexmark's README (Flink 1.13, throughput per
// core). docs/performance.md gives the sources in full.
var published = map[string][3]float64{
	// Beam on Flink (Feldera), Flink (Feldera), Flink (nexmark/nexmark)
	"q3": {555_247.0 / 16, 2_039_692.0 / 16, 152_120},
	"q8": {396_511.0 / 16, 2_103_271.0 / 16, 146_140},
	"q9": {88_715.0 / 16, 209_547.0 / 16, 14_240},
}

func flinkNexmark(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkFlinkQuery/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Nexmark on Flink 1.19 streaming, parallelism 2 on 2 cores: beamjoin (Go, portable, LOOPBACK workers) against Beam Java's Nexmark 2.60 on Beam 2.62's classic Flink runner (no Fn API) and portable (EMBEDDED Java SDK harness); events/s over the Flink job's run time, per core = /2; (x) = median of the rounds' paired ratios; published per core: Beam on Flink and Flink (Feldera, 16 cores) | Flink (nexmark/nexmark, Flink 1.13)",
		"query", "version", "N", "events/s", "per core", "vs classic", "vs portable", "rows", "state calls/event", "JVM MB", "Go MB", "published per core", "runs")
	for _, n := range sizes(names, "N") {
		for _, q := range []string{"q3", "q8", "q9"} {
			name := func(v string) string { return fmt.Sprintf("BenchmarkFlinkQuery/%s/%s/N=%d", q, v, n) }
			pub := published[q]
			shown := false
			for _, v := range flinkNexmarkVersions {
				if r[name(v)] == nil {
					if v == "beam-java-portable" && r[name("beamjoin")] != nil {
						tb.row(q, v, strconv.Itoa(n), "did not run", "", "", "", "", "", "", "", "", "0")
					}
					continue
				}
				eps, ok := r.median(name(v), "events/s")
				vs := func(peer string) string {
					if v == peer {
						return ""
					}
					x, ok := r.pairedRatio(name(v), name(peer), "events/s")
					return ratio(x, 1, ok)
				}
				rows, rok := r.median(name(v), "rows")
				rowsText := num(rows, rok)
				if rok && rows < 0 {
					rowsText = "not counted"
				}
				calls, cok := r.median(name(v), "state-calls/event")
				jmb, jmok := r.median(name(v), "jvm-peak-RSS-MB")
				gmb, gmok := r.median(name(v), "go-peak-RSS-MB")
				pubText := ""
				if !shown {
					pubText = fmt.Sprintf("%s, %s | %s", kilo(pub[0]), kilo(pub[1]), kilo(pub[2]))
					shown = true
				}
				tb.row(q, v, strconv.Itoa(n), num(eps, ok), num(eps/2, ok), vs("beam-java-classic"), vs("beam-java-portable"),
					rowsText, num(calls, cok), num(jmb, jmok), num(gmb, gmok), pubText, strconv.Itoa(r.runs(name(v), "events/s")))
			}
			if x, ok := r.pairedRatio(name("beamjoin"), name("beam-java-portable"), "events/s"); ok {
				t.add(fmt.Sprintf("Nexmark %s on Flink: beamjoin >= 1.0x Beam Java portable (N=%d)", q, n), x >= 1, ratio(x, 1, true))
			} else if r[name("beamjoin")] != nil {
				t.rows = append(t.rows, [3]string{fmt.Sprintf("Nexmark %s on Flink: beamjoin >= 1.0x Beam Java portable (N=%d)", q, n), "Beam Java's query does not run portable", "not measured"})
			}
			if x, ok := r.pairedRatio(name("beamjoin"), name("beam-java-classic"), "events/s"); ok {
				t.add(fmt.Sprintf("Nexmark %s on Flink: beamjoin >= 0.5x Beam Java classic (N=%d)", q, n), x >= 0.5, ratio(x, 1, true))
			}
		}
	}
	tb.flush()
}

// kilo formats events/s in thousands: "34.7K".
func kilo(v float64) string { return num(v/1000, true) + "K" }
