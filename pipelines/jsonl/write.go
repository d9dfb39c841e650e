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
	register.DoFn3x1[context.Context, int, func(*string) bool, error](&writeFn{})
	register.Function1x2(markFile)
	register.Function1x2(keyLine)
	register.Iter1[string]()
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
// results of a command, not for bulk output.
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
	// A marker is grouped with the lines so that the write happens once,
	// when all lines are in, even when there are none.
	marker := beam.ParDo(s, markFile, beam.Impulse(s))
	global := beam.WindowInto(s, window.NewGlobalWindows(), lines)
	all := beam.Flatten(s, marker, beam.ParDo(s, keyLine, global))
	beam.ParDo0(s, fn, beam.GroupByKey(s, all))
}

// fileMarker is the marker's value: a newline, which no line holds.
const fileMarker = "\n"

func markFile([]byte) (int, string) { return 0, fileMarker }

func keyLine(l string) (int, string) { return 0, l }

type writeFn struct {
	Path string
}

func (f *writeFn) ProcessElement(ctx context.Context, _ int, lines func(*string) bool) error {
	var all []string
	var l string
	for lines(&l) {
		if l != fileMarker {
			all = append(all, l)
		}
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
