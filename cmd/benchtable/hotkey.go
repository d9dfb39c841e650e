package main

import (
	"fmt"
	"io"
	"strings"
)

// hotKeyState is one hot key's state traffic per element by layout and
// buffer size (BenchmarkHotKeyState, over the in-memory backend), with the
// target that SplitKeys' bytes per element stay flat from 10k to 100k.
func hotKeyState(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkHotKeyState/")
	if len(names) == 0 {
		return
	}
	bufs := sizes(names, "buffered")
	header := []string{"layout"}
	for _, b := range bufs {
		header = append(header, fmt.Sprintf("state B/elem @%d", b))
	}
	header = append(header, "calls/elem", "largest value B")
	tb := newTable(w, "Hot key: state bytes read and written per element, calls per element and the largest value written (in-memory backend); bag = NoHotKeyDetection, detect = the default layout", header...)
	for _, l := range layoutsOf(names, "BenchmarkHotKeyState/") {
		row := []string{l}
		var calls, largest float64
		var cok, lok bool
		for _, b := range bufs {
			name := fmt.Sprintf("BenchmarkHotKeyState/%s/buffered=%d", l, b)
			v, ok := r.median(name, "state-B/elem")
			row = append(row, num(v, ok))
			if c, ok := r.median(name, "calls/elem"); ok {
				calls, cok = c, true
			}
			if g, ok := r.median(name, "largest-write-B"); ok {
				largest, lok = max(largest, g), true
			}
		}
		tb.row(append(row, num(calls, cok), num(largest, lok))...)
	}
	tb.flush()
	hi, hok := r.median("BenchmarkHotKeyState/split/buffered=100000", "state-B/elem")
	lo, lok := r.median("BenchmarkHotKeyState/split/buffered=10000", "state-B/elem")
	if hok && lok {
		t.add("hot key (SplitKeys): state bytes per element at 100000 buffered within 1.2x of 10000", hi/lo <= 1.2, ratio(hi, lo, true))
	}
}

// ordinaryKeysState is the state calls and bytes per element on ordinary
// keys, by layout (BenchmarkOrdinaryKeysState): what SplitKeys, and
// hot-key detection (detect), cost where no key is hot.
func ordinaryKeysState(w io.Writer, r results) {
	names := r.matching("BenchmarkOrdinaryKeysState/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Ordinary keys: state calls and bytes per element by layout (in-memory backend)", "layout", "calls/elem", "state B/elem", "(x) calls over bag")
	bag, bok := r.median("BenchmarkOrdinaryKeysState/bag", "calls/elem")
	for _, l := range layoutsOf(names, "BenchmarkOrdinaryKeysState/") {
		name := "BenchmarkOrdinaryKeysState/" + l
		c, cok := r.median(name, "calls/elem")
		b, ok := r.median(name, "state-B/elem")
		tb.row(l, num(c, cok), num(b, ok), ratio(c, bag, cok && bok))
	}
	tb.flush()
}

// boundedHotKey is the bounded path on one huge key against ordinary keys
// (BenchmarkBoundedHotKey), with issue 28's targets: the most a group's
// sweep holds is flat from 100k to 1M elements on one key, and one key of
// 1M costs at most 1.5x the time per element of 1000 keys of 1k.
func boundedHotKey(w io.Writer, r results, t *targets) {
	names := r.matching("BenchmarkBoundedHotKey/")
	if len(names) == 0 {
		return
	}
	tb := newTable(w, "Bounded path: one key against 1000 keys (join.Bounded)", "input", "ns/elem", "sweep held max B", "peak live MB")
	for _, n := range names {
		ns, nok := r.median(n, "ns/elem")
		held, hok := r.median(n, "sweep-held-max-B")
		peak, pok := r.median(n, "peak-live-MB")
		tb.row(strings.TrimPrefix(n, "BenchmarkBoundedHotKey/"), num(ns, nok), num(held, hok), num(peak, pok))
	}
	tb.flush()
	const one1M, one100k, many1M = "BenchmarkBoundedHotKey/keys=1/N=1000000", "BenchmarkBoundedHotKey/keys=1/N=100000", "BenchmarkBoundedHotKey/keys=1000/N=1000000"
	hi, hok := r.median(one1M, "sweep-held-max-B")
	lo, lok := r.median(one100k, "sweep-held-max-B")
	if hok && lok {
		t.add("bounded, one key: sweep's high-water mark at 1M within 1.2x of 100k", hi/lo <= 1.2, ratio(hi, lo, true))
	}
	one, ook := r.median(one1M, "ns/elem")
	many, mok := r.median(many1M, "ns/elem")
	if ook && mok {
		t.add("bounded, one key of 1M: time within 1.5x of 1000 keys of 1k", one/many <= 1.5, ratio(one, many, true))
	}
}

// layoutsOf returns the first path element after prefix of each name, in
// the order they first appear.
func layoutsOf(names []string, prefix string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		l := strings.Split(strings.TrimPrefix(n, prefix), "/")[0]
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
