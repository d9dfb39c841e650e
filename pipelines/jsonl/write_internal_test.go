package jsonl

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// batchLinesFn emits a batch as soon as it holds batchBytes of text, and
// what is left when the bundle finishes; a bundle of no lines emits
// nothing.
func TestBatchLines(t *testing.T) {
	line := strings.Repeat("x", batchBytes/4)
	var sizes []int
	emit := func(k int, b []string) {
		if k != 0 {
			t.Errorf("batch keyed %d, want 0", k)
		}
		sizes = append(sizes, len(b))
	}
	f := &batchLinesFn{}
	for range 2 { // two bundles, the second on the same instance
		f.StartBundle(emit)
		for range 9 {
			f.ProcessElement(line, emit)
		}
		f.FinishBundle(emit)
	}
	f.StartBundle(emit)
	f.FinishBundle(emit)
	if diff := cmp.Diff([]int{4, 4, 1, 4, 4, 1}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}
