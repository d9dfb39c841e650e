// This file holds Write, the sink: one file of lines, written once all its
// lines are known, sorted so that runs are comparable.

package jsonl

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn3x1[context.Context, int, func(*[]string) bool, error](&writeFn{})
	register.Function1x2(markFile)
	register.DoFn2x0[string, func(int, []string)](&batchLinesFn{})
	register.Emitter2[int, []string]()
	register.Iter1[[]string]()
}

// Stdout and Stderr are the paths Write takes for the standard output and
// standard error of the process that runs the DoFn. With Prism in process
// (the default) and LOOPBACK workers that is the command itself; on a
// remote runner it is a worker's log, so give a file there.
const (
	Stdout = "/dev/stdout"
	Stderr = "/dev/stderr"
)

// Write writes lines, a PCollection<string> of single-line texts, to path,
// one per line in natural order (digit runs compare as numbers, so
// "line":9 sorts before "line":10), once every line is known. It writes
// path, empty, when there are none. Lines of any windowing are written to
// the one file. "-" means Stdout. A relative local path
// is taken from the working directory at construction.
//
// Every line passes through one worker, in memory: Write is meant for the
// results of a command, not for bulk output. The lines travel to it in
// batches, one per bundle (or per batchBytes), not one element each: a
// runner that holds the elements of an open window and looks at all of
// them whenever the watermark moves (Prism does) then holds a few batches
// rather than every line of a streaming run.
//
//	jsonl.Write(s, "unpaid.jsonl", lines)
func Write(s beam.Scope, path string, lines beam.PCollection) {
	s = s.Scope("jsonl.Write")
	fn := &writeFn{Path: path}
	if path == "-" {
		fn.Path = Stdout
	}
	if isLocal(fn.Path) && !filepath.IsAbs(fn.Path) {
		if dir, err := os.Getwd(); err == nil {
			fn.Path = filepath.Join(dir, fn.Path)
		}
	}
	// A marker, an empty batch, is grouped with the lines so that the write
	// happens once, when all lines are in, even when there are none.
	marker := beam.ParDo(s, markFile, beam.Impulse(s))
	global := beam.WindowInto(s, window.NewGlobalWindows(), lines)
	all := beam.Flatten(s, marker, beam.ParDo(s, &batchLinesFn{}, global))
	beam.ParDo0(s, fn, beam.GroupByKey(s, all))
}

func markFile([]byte) (int, []string) { return 0, nil }

// batchBytes is about the most text a batch of lines holds: a batch goes
// once it reaches that size, the rest when its bundle finishes.
const batchBytes = 1 << 20

// batchLinesFn gathers the lines of a bundle into batches, keyed 0 for the
// write. It emits a full batch in the window and time of the line that
// fills it, and the last one when the bundle finishes, in the global
// window at time zero: both are the global window, which Write puts the
// lines in and whose only firing is at its end, so neither time matters.
type batchLinesFn struct {
	batch []string
	bytes int
}

// StartBundle drops what a failed bundle may have left.
func (f *batchLinesFn) StartBundle(func(int, []string)) { f.batch, f.bytes = nil, 0 }

func (f *batchLinesFn) ProcessElement(l string, emit func(int, []string)) {
	f.batch = append(f.batch, l)
	if f.bytes += len(l); f.bytes >= batchBytes {
		f.flush(emit)
	}
}

func (f *batchLinesFn) FinishBundle(emit func(int, []string)) { f.flush(emit) }

func (f *batchLinesFn) flush(emit func(int, []string)) {
	if len(f.batch) > 0 {
		emit(0, f.batch)
	}
	f.batch, f.bytes = nil, 0
}

type writeFn struct {
	Path string
}

func (f *writeFn) ProcessElement(ctx context.Context, _ int, batches func(*[]string) bool) error {
	var all []string
	var b []string
	for batches(&b) {
		all = append(all, b...)
	}
	sort.Slice(all, func(i, j int) bool { return naturalLess(all[i], all[j]) })

	var w io.Writer
	var closer io.Closer
	switch f.Path {
	case Stdout:
		w = os.Stdout
	case Stderr:
		w = os.Stderr
	default:
		fs, err := filesystem.New(ctx, f.Path)
		if err != nil {
			return fmt.Errorf("beamjoin: %s: %w", f.Path, err)
		}
		defer fs.Close()
		wc, err := fs.OpenWrite(ctx, f.Path)
		if err != nil {
			return fmt.Errorf("beamjoin: %s: %w", f.Path, err)
		}
		w, closer = wc, wc
	}
	bw := bufio.NewWriter(w)
	for _, l := range all {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	err := bw.Flush()
	if closer != nil {
		if cerr := closer.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("beamjoin: writing %s: %w", f.Path, err)
	}
	return nil
}

// naturalLess orders strings with runs of ASCII digits compared by value.
func naturalLess(a, b string) bool {
	for len(a) > 0 && len(b) > 0 {
		if isDigit(a[0]) && isDigit(b[0]) {
			i, j := digitRun(a), digitRun(b)
			da, db := trimZeros(a[:i]), trimZeros(b[:j])
			if len(da) != len(db) {
				return len(da) < len(db)
			}
			if da != db {
				return da < db
			}
			if i != j { // same value, fewer leading zeros first
				return i < j
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
