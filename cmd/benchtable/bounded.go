package main

// The sections of issue 14's bounded-input path: join.Bounded against the
// window join and the streaming path on one bounded input, and the
// beamjoin command's batch interval join against its streaming path and
// SQLite.

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// boundedOrder lists the BenchmarkBounded pipelines in the order shown.
var boundedOrder = []string{"interval-bounded-inner", "interval-bounded-left-final", "window-tumbling", "interval-inner"}

func bounded(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkBounded/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Bounded input on Prism, in process (1000 keys, ±5 s, one partner each); (x) = over window-tumbling at the same N; cpu includes Prism's",
		"pipeline", "N", "elem/s", "(x)", "cpu us/elem", "cpu (x)", "peak live MB", "runs")
	for _, n := range sizes(names, "N") {
		name := func(p string) string { return fmt.Sprintf("BenchmarkBounded/%s/N=%d", p, n) }
		base, bok := r.median(name("window-tumbling"), "elem/s")
		baseCPU, cok := r.median(name("window-tumbling"), "cpu-ns/elem")
		for _, p := range boundedOrder {
			if r[name(p)] == nil {
				continue
			}
			eps, ok := r.median(name(p), "elem/s")
			cpu, cpuOK := r.median(name(p), "cpu-ns/elem")
			mem, mok := r.median(name(p), "peak-live-MB")
			tb.row(p, strconv.Itoa(n), num(eps, ok), ratio(eps, base, ok && bok), num(cpu/1000, cpuOK), ratio(baseCPU, cpu, cpuOK && cok),
				num(mem, mok), strconv.Itoa(r.runs(name(p), "elem/s")))
		}
	}
	tb.flush()
	ns := sizes(names, "N")
	for i := len(ns) - 1; i >= 0; i-- {
		j, jok := r.median(fmt.Sprintf("BenchmarkBounded/interval-bounded-inner/N=%d", ns[i]), "elem/s")
		b, bok := r.median(fmt.Sprintf("BenchmarkBounded/window-tumbling/N=%d", ns[i]), "elem/s")
		if jok && bok {
			t.add(fmt.Sprintf("bounded path >= 1.0x window-tumbling throughput, same bounded input (N=%d)", ns[i]), j/b >= 1, ratio(j, b, true))
			break
		}
	}
}

func batch(w io.Writer, r results, t *targets) {
	const prefix = "BenchmarkBatchInterval/path="
	names := r.matching(prefix)
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "beamjoin interval on files read whole (left outer, final, 0-15 min), each in a process of its own; (x) = time of the streaming path over this one's",
		"path", "input", "s/run", "(x)", "peak RSS MB", "runs")
	for _, in := range inputsOf(names, prefix) {
		streaming, sok := runRows(tb, r, prefix, in, []string{"bounded", "streaming", "sqlite3"}, "streaming")
		b, bok := r.median(prefix+"bounded"+in, "s/run")
		if bok && sok {
			t.add(fmt.Sprintf("beamjoin interval batch (%s): >= 10x faster than the streaming path", in[1:]), streaming/b >= 10, ratio(streaming, b, true))
		}
		if rss, ok := r.median(prefix+"bounded"+in, "peak-RSS-MB"); ok {
			t.add(fmt.Sprintf("beamjoin interval batch (%s): peak RSS <= 500 MB", in[1:]), rss <= 500, num(rss, true)+" MB")
		}
	}
	tb.flush()
}

// inputsOf lists, once each and in order, the inputs of names of the form
// prefix + path + "/" + input: the "/input" part.
func inputsOf(names []string, prefix string) []string {
	var inputs []string
	for _, n := range names {
		rest := strings.TrimPrefix(n, prefix)
		if i := strings.IndexByte(rest, '/'); i >= 0 && !slices.Contains(inputs, rest[i:]) {
			inputs = append(inputs, rest[i:])
		}
	}
	return inputs
}

// runRows writes a row for each of paths that ran on input in (names
// prefix + path + in): seconds per run, base's time over its, peak RSS
// and the number of runs. It returns base's median seconds per run.
func runRows(tb *table, r results, prefix, in string, paths []string, base string) (float64, bool) {
	baseS, bok := r.median(prefix+base+in, "s/run")
	for _, p := range paths {
		name := prefix + p + in
		if r[name] == nil {
			continue
		}
		s, ok := r.median(name, "s/run")
		rss, rok := r.median(name, "peak-RSS-MB")
		tb.row(p, in[1:], num(s, ok), ratio(baseS, s, ok && bok), num(rss, rok), strconv.Itoa(r.runs(name, "s/run")))
	}
	return baseS, bok
}
