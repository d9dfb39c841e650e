package jsonl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.DoFn2x0[[]byte, func(string)](&manyLinesFn{})
	register.Emitter1[string]()
}

// manyLinesFn emits N lines of about 100 bytes, in one bundle, out of
// order.
type manyLinesFn struct{ N int }

func (f *manyLinesFn) ProcessElement(_ []byte, emit func(string)) {
	for i := f.N - 1; i >= 0; i-- {
		emit(fmt.Sprintf(`{"line":%d,"pad":"%s"}`, i, strings.Repeat("x", 80)))
	}
}

// Write writes every line once, in natural order, however many batches
// they travel in (30,000 lines of ~100 bytes in one bundle are three
// batches), and an empty file when there are none.
func TestWrite(t *testing.T) {
	for _, n := range []int{0, 1, 30_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			out := filepath.Join(t.TempDir(), "out.jsonl")
			jsonl.Write(s, out, beam.ParDo(s, &manyLinesFn{N: n}, beam.Impulse(s)))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for i := range n {
				fmt.Fprintf(&want, `{"line":%d,"pad":"%s"}`+"\n", i, strings.Repeat("x", 80))
			}
			if diff := cmp.Diff(want.String(), string(b)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", out, diff)
			}
		})
	}
}
