package flinkrun

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn1x1[string, error](&writeLinesFn{})
}

// WriteLines writes a PCollection<string> to files in dir, a local
// directory that the workers share with the test (every environment here
// runs on this machine): one file per bundle, written when the bundle
// finishes. A bundle that a runner retries after its file was written
// leaves its lines twice, as an at-least-once sink does; ReadLines returns
// them all, so that a test can count duplicates.
func WriteLines(s beam.Scope, dir string, col beam.PCollection) {
	s = s.Scope("flinkrun.WriteLines")
	beam.ParDo0(s, &writeLinesFn{Dir: dir}, col)
}

type writeLinesFn struct {
	Dir   string
	lines []string
}

func (f *writeLinesFn) StartBundle() { f.lines = f.lines[:0] }

func (f *writeLinesFn) ProcessElement(line string) error {
	if strings.Contains(line, "\n") {
		return fmt.Errorf("flinkrun.WriteLines: line %q holds a newline", line)
	}
	f.lines = append(f.lines, line)
	return nil
}

func (f *writeLinesFn) FinishBundle() error {
	if len(f.lines) == 0 {
		return nil
	}
	var id [8]byte
	rand.Read(id[:])
	name := filepath.Join(f.Dir, hex.EncodeToString(id[:])+".lines")
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(f.lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("flinkrun.WriteLines: %w", err)
	}
	return os.Rename(tmp, name)
}

// ReadLines returns the lines that WriteLines wrote to dir, sorted.
func ReadLines(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.lines"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// Lines is ReadLines for a test: it fails t when it cannot read dir.
func Lines(t testing.TB, dir string) []string {
	t.Helper()
	lines, err := ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// RunLines runs p, which writes its lines to dir (WriteLines), on the job
// server of o, and returns the lines, sorted. It gives the job ten
// minutes, and fails t when the job fails.
func RunLines(t testing.TB, p *beam.Pipeline, dir string, o Options) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := Execute(ctx, p, o); err != nil {
		t.Fatalf("on Flink: %v", err)
	}
	return Lines(t, dir)
}
