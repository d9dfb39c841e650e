package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	in := `goos: linux
pkg: github.com/beamjoin/beamjoin/transforms/join
BenchmarkArrival/buffered=100/core-2   	 1000000	       381.6 ns/op	     112 B/op	       1 allocs/op
BenchmarkArrival/buffered=100/core-2   	 1000000	       390.0 ns/op	     112 B/op	       1 allocs/op
BenchmarkPipeline/bag-append/N=10000-2 	time=2026-11-29T15:01:54.641Z level=INFO msg="pipeline done!"
       1	 650430108 ns/op	     15526 elem/s	        12.30 peak-live-MB
BenchmarkPipeline/interval-inner/N=10000
BenchmarkPipeline/interval-inner/N=10000-2     	       1	2650652829 ns/op	      3777 elem/s
PASS
ok  	github.com/beamjoin/beamjoin/transforms/join	44.165s
`
	got, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := results{
		"BenchmarkArrival/buffered=100/core":       {"ns/op": {381.6, 390}, "B/op": {112, 112}, "allocs/op": {1, 1}},
		"BenchmarkPipeline/bag-append/N=10000":     {"ns/op": {650430108}, "elem/s": {15526}, "peak-live-MB": {12.3}},
		"BenchmarkPipeline/interval-inner/N=10000": {"ns/op": {2650652829}, "elem/s": {3777}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	if m, ok := got.median("BenchmarkArrival/buffered=100/core", "ns/op"); !ok || m != 385.8 {
		t.Errorf("median = %v, %v; want 385.8", m, ok)
	}
}
