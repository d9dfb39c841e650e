package jsonl_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/google/go-cmp/cmp"
)

func init() {
	filesystem.Register("countfs", func(ctx context.Context) filesystem.Interface {
		return &countFS{mem: memfs.New(ctx)}
	})
}

// countFS is a remote file system as the replay meets gs://: Beam's
// in-memory file system behind readers that cannot seek, counting the
// bytes read from each file and refusing to read once it is closed.
type countFS struct {
	mem    filesystem.Interface
	closed bool
}

var countBytes struct {
	sync.Mutex
	read map[string]int64
}

func memName(name string) string { return "memfs://" + strings.TrimPrefix(name, "countfs://") }

func (f *countFS) Close() error { f.closed = true; return nil }

func (f *countFS) List(ctx context.Context, glob string) ([]string, error) {
	names, err := f.mem.List(ctx, memName(glob))
	for i, n := range names {
		names[i] = "countfs://" + strings.TrimPrefix(n, "memfs://")
	}
	return names, err
}

func (f *countFS) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	r, err := f.mem.OpenRead(ctx, memName(name))
	if err != nil {
		return nil, err
	}
	return &countReader{fs: f, name: name, r: r}, nil
}

func (f *countFS) OpenWrite(ctx context.Context, name string) (io.WriteCloser, error) {
	return f.mem.OpenWrite(ctx, memName(name))
}

func (f *countFS) Size(ctx context.Context, name string) (int64, error) {
	return f.mem.Size(ctx, memName(name))
}

// countReader is an io.ReadCloser only: no Seek, no ReadAt.
type countReader struct {
	fs   *countFS
	name string
	r    io.ReadCloser
}

func (r *countReader) Read(b []byte) (int, error) {
	if r.fs.closed {
		return 0, fmt.Errorf("countfs: %s: read after the file system was closed", r.name)
	}
	n, err := r.r.Read(b)
	countBytes.Lock()
	countBytes.read[r.name] += int64(n)
	countBytes.Unlock()
	return n, err
}

func (r *countReader) Close() error { return r.r.Close() }

// A replay of files on a file system that cannot seek reads each byte
// once, however many times it reports the watermark (here after every
// line), learns the sizes without reading, and reads with the file system
// open.
func TestReplayReadsRemoteFilesOnce(t *testing.T) {
	const lines = 150
	var left, right strings.Builder
	for i := range lines {
		fmt.Fprintf(&left, "{\"id\":\"l%03d\",\"t\":%d}\n", i, i*1000)
		fmt.Fprintf(&right, "{\"id\":\"r%03d\",\"t\":%d}\n", i, i*1000+500)
	}
	memfs.Write("memfs://remote/left.jsonl", []byte(left.String()))
	memfs.Write("memfs://remote/right.jsonl", []byte(right.String()))
	want := map[string]int64{"countfs://remote/left.jsonl": int64(left.Len()), "countfs://remote/right.jsonl": int64(right.Len())}

	p, s := beam.NewPipelineWithRoot()
	src := func(name string) jsonl.Source {
		return jsonl.Source{Name: name, Pattern: "countfs://remote/" + name + ".jsonl", Fields: jsonl.Fields{Key: "id", Time: "t"},
			Replay: true, WatermarkStep: time.Millisecond}
	}
	records, _ := jsonl.ReadAll(s, src("left"), src("right"))
	beam.ParDo0(s, &traceRecordFn{Side: "left", Boundary: true}, records[0])
	beam.ParDo0(s, &traceRecordFn{Side: "right"}, records[1])
	reset := func() {
		countBytes.Lock()
		countBytes.read = map[string]int64{}
		countBytes.Unlock()
		trace.lines = nil
	}
	reset()
	// On Prism's progress race the whole run is done again: count that one.
	if !slices.Contains(jobopts.GetExperiments(), prismrun.NoSplits) {
		*jobopts.Experiments = strings.Join(append(jobopts.GetExperiments(), prismrun.NoSplits), ",")
	}
	if _, err := prismrun.Run(context.Background(), "prism", p, func(int, error) { reset() }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, countBytes.read); diff != "" {
		t.Errorf("bytes read per file (-size +read):\n%s", diff)
	}
	var got, reports int
	for _, l := range trace.lines {
		if l == "|" {
			reports++
		} else {
			got++
		}
	}
	if got != 2*lines || reports < lines {
		t.Errorf("%d records in %d bundles; want %d records, in %d bundles or more", got, reports, 2*lines, lines)
	}
}
