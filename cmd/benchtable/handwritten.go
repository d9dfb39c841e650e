package main

// The sections of issue 14's peer comparison: join.Interval at its default
// settings against the interval join a Beam user would write by hand
// (BenchmarkPipeline/handwritten-inner), and what each buffers per key on
// a key with steady traffic (BenchmarkSteadyKey) against what the span
// requires.

import (
	"fmt"
	"io"
	"strconv"
)

// peerOrder lists the joins compared with the hand-written one.
var peerOrder = []string{"handwritten-inner", "interval-inner", "interval-left-final"}

// peerGoals are issue 14's throughput targets against the hand-written join.
var peerGoals = []struct {
	pipeline string
	min      float64
}{{"interval-inner", 1.5}, {"interval-left-final", 1.0}}

func handWritten(w io.Writer, r results, t *targets) {
	ns := sizes(r.matching("BenchmarkPipeline/handwritten-inner/"), "N")
	if len(ns) == 0 {
		return
	}
	tb := newTable(w, "join.Interval at default settings against the hand-written join (Beam blog pattern: two bags, one timer re-set to the latest expiry; inner only), same input; (x) = elem/s over the hand-written's at the same N",
		"pipeline", "N", "elem/s", "(x)", "max buffered/key", "runs")
	for _, n := range ns {
		name := func(p string) string { return fmt.Sprintf("BenchmarkPipeline/%s/N=%d", p, n) }
		base, bok := r.median(name("handwritten-inner"), "elem/s")
		for _, p := range peerOrder {
			if r[name(p)] == nil {
				continue
			}
			eps, ok := r.median(name(p), "elem/s")
			mb, mbok := r.median(name(p), "max-buffered/key")
			tb.row(p, strconv.Itoa(n), num(eps, ok), ratio(eps, base, ok && bok), num(mb, mbok), strconv.Itoa(r.runs(name(p), "elem/s")))
		}
	}
	tb.flush()
	// Targets from the largest N that has both the join and the peer.
	for _, goal := range peerGoals {
		for i := len(ns) - 1; i >= 0; i-- {
			j, jok := r.median(fmt.Sprintf("BenchmarkPipeline/%s/N=%d", goal.pipeline, ns[i]), "elem/s")
			h, hok := r.median(fmt.Sprintf("BenchmarkPipeline/handwritten-inner/N=%d", ns[i]), "elem/s")
			if jok && hok {
				t.add(fmt.Sprintf("%s, defaults, >= %.1fx the hand-written join (N=%d)", goal.pipeline, goal.min, ns[i]), j/h >= goal.min, ratio(j, h, true))
				break
			}
		}
	}
}

// steadyLimit is issue 14's bound on what the join buffers per key under
// steady traffic, in multiples of what the span requires.
const steadyLimit = 2.0

func steadyKey(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkSteadyKey/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "One key with steady traffic (a pair every 500 ms, ±5 s): peak buffered elements against what the span requires with exact cleanup",
		"pipeline", "N", "max buffered/key", "span needs/key", "(x)", "elem/s")
	for _, n := range sizes(names, "N") {
		for _, p := range peerOrder {
			name := fmt.Sprintf("BenchmarkSteadyKey/%s/N=%d", p, n)
			if r[name] == nil {
				continue
			}
			mb, mbok := r.median(name, "max-buffered/key")
			needs, nok := r.median(name, "span-needs/key")
			eps, eok := r.median(name, "elem/s")
			tb.row(p, strconv.Itoa(n), num(mb, mbok), num(needs, nok), ratio(mb, needs, mbok && nok), num(eps, eok))
			if p != "handwritten-inner" && mbok && nok {
				t.add(fmt.Sprintf("%s: peak buffered on a steady key <= %.0fx what the span requires (N=%d)", p, steadyLimit, n), mb/needs <= steadyLimit, ratio(mb, needs, true))
			}
		}
	}
	tb.flush()
}
