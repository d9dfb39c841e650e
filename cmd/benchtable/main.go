// Command benchtable reads the output of beamjoin's Go benchmarks (`go test
// -bench`, as `make bench` keeps it in .bench/raw.txt) and prints one table
// a person can read: the core against the nested loop, the pipelines on
// Prism against the bag-append baseline, join.Interval against a
// hand-written join and what each buffers on a steady key, scaling, the
// hot key, hot keys found at run time, the bounded path, state bytes, and
// each target met or missed. Every ratio is computed from the medians of
// the same file, so from the same run.
//
//	go run ./cmd/benchtable .bench/raw.txt
//
// The raw file stays benchstat-compatible.
package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

func main() {
	in := io.Reader(os.Stdin)
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	r, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(r) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark results in the input")
		os.Exit(1)
	}
	report(os.Stdout, r)
}

// report writes every section for which the input has results.
func report(w io.Writer, r results) {
	var t targets
	core(w, r, &t)
	joiner(w, r)
	pipelines(w, r, &t)
	handWritten(w, r, &t)
	steadyKey(w, r, &t)
	scaling(w, r, &t)
	hotKey(w, r, &t)
	hotKeyState(w, r, &t)
	ordinaryKeysState(w, r)
	hotDetect(w, r, &t)
	boundedHotKey(w, r, &t)
	bounded(w, r, &t)
	batch(w, r, &t)
	windowLate(w, r, &t)
	batchWindow(w, r, &t)
	bundleCache(w, r, &t)
	resultDecode(w, r, &t)
	nexmark(w, r, &t)
	nexmarkRSS(w, r, &t)
	stateBytes(w, r, &t)
	multiWay(w, r, &t)
	flinkJoins(w, r, &t)
	flinkNexmark(w, r, &t)
	t.print(w)
}

// table is a tab-aligned section with a title.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, title string, header ...string) *table {
	fmt.Fprintf(w, "\n%s\n", title)
	t := &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")+"\t") }

func (t *table) flush() { t.tw.Flush() }

// num formats a figure with a precision that suits its size.
func num(v float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// ratio formats a/b as "3.2x".
func ratio(a, b float64, ok bool) string {
	if !ok || b == 0 {
		return "-"
	}
	return num(a/b, true) + "x"
}

// param extracts the integer after key= in a benchmark name.
func param(name, key string) (int, bool) {
	m := regexp.MustCompile(regexp.QuoteMeta(key) + `=(\d+)`).FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// sizes returns the values of key= among the names, ascending, once each.
func sizes(names []string, key string) []int {
	seen := map[int]bool{}
	var out []int
	for _, n := range names {
		if v, ok := param(n, key); ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func core(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkArrival/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Matching core (match.Buffer), one key, per arriving element with one partner; median of runs",
		"buffered", "core ns/op", "B/op", "allocs/op", "nested loop ns/op", "core speed-up", "runs")
	for _, n := range sizes(names, "buffered") {
		c := fmt.Sprintf("BenchmarkArrival/buffered=%d/core", n)
		o := fmt.Sprintf("BenchmarkArrival/buffered=%d/nested-loop", n)
		cv, cok := r.median(c, "ns/op")
		ov, ook := r.median(o, "ns/op")
		bv, bok := r.median(c, "B/op")
		av, aok := r.median(c, "allocs/op")
		tb.row(strconv.Itoa(n), num(cv, cok), num(bv, bok), num(av, aok), num(ov, ook), ratio(ov, cv, cok && ook), strconv.Itoa(r.runs(c, "ns/op")))
		if n == 100 && cok {
			t.add("core <= 1 us/element at 100 buffered, one partner", cv <= 1000, fmt.Sprintf("%s ns", num(cv, true)))
		}
		if n == 10_000 && cok && ook {
			t.add("core >= 20x faster than the nested loop at 10,000 buffered", ov/cv >= 20, ratio(ov, cv, true))
		}
	}
	tb.flush()
}

func joiner(w io.Writer, r results) {
	names := r.matching("BenchmarkStreamJoiner/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "StreamJoiner per element (keys take turns; each element has one partner buffered), against its nested-loop reference",
		"keys", "buffered/key", "joiner ns/op", "B/op", "allocs/op", "nested loop ns/op", "speed-up")
	var bases []string
	for _, n := range names {
		if base := n[:strings.LastIndex(n, "/")]; !slices.Contains(bases, base) {
			bases = append(bases, base)
		}
	}
	slices.SortFunc(bases, func(a, b string) int {
		x, _ := param(a, "buffered")
		y, _ := param(b, "buffered")
		return x - y
	})
	for _, base := range bases {
		keys, _ := param(base, "keys")
		buf, _ := param(base, "buffered")
		jv, jok := r.median(base+"/joiner", "ns/op")
		ov, ook := r.median(base+"/nested-loop", "ns/op")
		bv, bok := r.median(base+"/joiner", "B/op")
		av, aok := r.median(base+"/joiner", "allocs/op")
		tb.row(strconv.Itoa(keys), strconv.Itoa(buf), num(jv, jok), num(bv, bok), num(av, aok), num(ov, ook), ratio(ov, jv, jok && ook))
	}
	tb.flush()
}

// pipelineOrder lists the pipeline benchmarks in the order they are shown.
var pipelineOrder = []string{
	"bag-append", "handwritten-inner", "interval-inner", "interval-inner-nodetect", "interval-left-final", "window-tumbling",
	"interval-inner-nocache", "interval-inner-split", "interval-inner-cleanup10s", "interval-inner-cleanup60s",
}

func pipelines(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkPipeline/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Pipelines on Prism, in process, same generated input (1000 keys, ±5 s, one partner each); (x) = elem/s over bag-append's at the same N",
		"pipeline", "N", "elem/s", "(x)", "us/elem", "peak live MB", "max buffered/key", "runs")
	for _, n := range sizes(names, "N") {
		base, bok := r.median(fmt.Sprintf("BenchmarkPipeline/bag-append/N=%d", n), "elem/s")
		for _, p := range pipelineOrder {
			name := fmt.Sprintf("BenchmarkPipeline/%s/N=%d", p, n)
			if r[name] == nil {
				continue
			}
			eps, ok := r.median(name, "elem/s")
			ns, nok := r.median(name, "ns/elem")
			mem, mok := r.median(name, "peak-live-MB")
			mb, mbok := r.median(name, "max-buffered/key")
			tb.row(p, strconv.Itoa(n), num(eps, ok), ratio(eps, base, ok && bok), num(ns/1000, nok), num(mem, mok), num(mb, mbok), strconv.Itoa(r.runs(name, "elem/s")))
		}
	}
	tb.flush()
	// Targets from the largest N that has both the join and the baseline.
	ns := sizes(names, "N")
	for _, goal := range []struct {
		pipeline string
		min      float64
	}{{"interval-inner", 0.5}, {"interval-left-final", 0.4}} {
		for i := len(ns) - 1; i >= 0; i-- {
			j, jok := r.median(fmt.Sprintf("BenchmarkPipeline/%s/N=%d", goal.pipeline, ns[i]), "elem/s")
			b, bok := r.median(fmt.Sprintf("BenchmarkPipeline/bag-append/N=%d", ns[i]), "elem/s")
			if jok && bok {
				t.add(fmt.Sprintf("%s >= %.1fx bag-append throughput (N=%d)", goal.pipeline, goal.min, ns[i]), j/b >= goal.min, ratio(j, b, true))
				break
			}
		}
	}
}

func scaling(w io.Writer, r results, t *targets) {
	ns := sizes(r.matching("BenchmarkPipeline/interval-inner/"), "N")
	if len(ns) < 2 {
		return
	}
	tb := newTable(w, "Scaling of interval-inner with the watermark advancing through the input; slope = us/elem relative to the smallest N",
		"N", "us/elem", "slope", "peak live MB", "memory vs previous N", "max buffered/key")
	first, fok := r.median(fmt.Sprintf("BenchmarkPipeline/interval-inner/N=%d", ns[0]), "ns/elem")
	var prevMem float64
	var prevOK bool
	mems := map[int]float64{}
	for _, n := range ns {
		name := fmt.Sprintf("BenchmarkPipeline/interval-inner/N=%d", n)
		per, nok := r.median(name, "ns/elem")
		mem, mok := r.median(name, "peak-live-MB")
		mb, mbok := r.median(name, "max-buffered/key")
		tb.row(strconv.Itoa(n), num(per/1000, nok), ratio(per, first, nok && fok), num(mem, mok), ratio(mem, prevMem, mok && prevOK), num(mb, mbok))
		prevMem, prevOK = mem, mok
		if mok {
			mems[n] = mem
		}
	}
	tb.flush()
	if m1, ok := mems[1_000_000]; ok {
		if m100, ok := mems[100_000]; ok {
			t.add("1M elements: peak memory within 1.5x of the 100k run", m1/m100 <= 1.5, ratio(m1, m100, true))
		}
	} else {
		t.rows = append(t.rows, [3]string{"1M elements: peak memory within 1.5x of the 100k run", "BENCH_1M=1 make bench runs it", "not run"})
	}
}

func hotKey(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkHotKey/")
	if len(names) == 0 {
		return
	}
	bufs := sizes(names, "buffered")
	header := []string{"layout"}
	for _, b := range bufs {
		header = append(header, fmt.Sprintf("us/elem @%d", b))
	}
	header = append(header, "largest vs smallest")
	tb := newTable(w, "Hot key: one key, steady-state wall time per element once the buffer has filled; bag = NoHotKeyDetection, detect = the default layout, split = SplitKeys", header...)
	for _, l := range layoutsOf(names, "BenchmarkHotKey/") {
		row := []string{l}
		var lo, hi float64
		var lok, hok bool
		for i, b := range bufs {
			v, ok := r.median(fmt.Sprintf("BenchmarkHotKey/%s/buffered=%d", l, b), "ns/elem-steady")
			row = append(row, num(v/1000, ok))
			if i == 0 {
				lo, lok = v, ok
			}
			if i == len(bufs)-1 {
				hi, hok = v, ok
			}
		}
		row = append(row, ratio(hi, lo, lok && hok))
		tb.row(row...)
	}
	tb.flush()
	steady := func(l string, b int) (float64, bool) {
		return r.median(fmt.Sprintf("BenchmarkHotKey/%s/buffered=%d", l, b), "ns/elem-steady")
	}
	if hi, hok := steady("bag", 10_000); hok {
		if lo, lok := steady("bag", 100); lok {
			t.add("hot key (bag layout, NoHotKeyDetection): cost at 10000 buffered within 3x of 100", hi/lo <= 3, ratio(hi, lo, true))
		}
	}
	if hi, hok := steady("split", 100_000); hok {
		if lo, lok := steady("split", 10_000); lok {
			t.add("hot key (SplitKeys): cost at 100000 buffered within 1.2x of 10000", hi/lo <= 1.2, ratio(hi, lo, true))
		}
	}
}

func stateBytes(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkStateBytes/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "State bytes per buffered element (string values; Beam's bag framing included)",
		"value chars", "encoded B", "appended B", "rewritten B", "limit 2xenc+64")
	for _, n := range sizes(names, "value") {
		name := fmt.Sprintf("BenchmarkStateBytes/value=%d", n)
		enc, eok := r.median(name, "encoded-B")
		app, aok := r.median(name, "appended-B")
		rew, rok := r.median(name, "rewritten-B")
		tb.row(strconv.Itoa(n), num(enc, eok), num(app, aok), num(rew, rok), num(2*enc+64, eok))
		if eok && aok {
			t.add(fmt.Sprintf("state per element <= 2x encoded + 64 B (%d-char value)", n), app <= 2*enc+64, fmt.Sprintf("%s B vs %s B", num(app, true), num(2*enc+64, true)))
		}
	}
	tb.flush()
}

// targets collects each target with its measured figure.
type targets struct {
	rows [][3]string
}

func (t *targets) add(what string, met bool, figure string) {
	verdict := "MISSED"
	if met {
		verdict = "met"
	}
	t.rows = append(t.rows, [3]string{what, figure, verdict})
}

func (t *targets) print(w io.Writer) {
	if len(t.rows) == 0 {
		return
	}
	tb := newTable(w, "Targets (issues 6, 9, 14, 28, 30, 49, 50 and 51)", "target", "measured", "")
	for _, row := range t.rows {
		tb.row(row[0], row[1], row[2])
	}
	tb.flush()
}
