// This file holds Read, the source of keyed, timestamped records, and the
// batch reader: each file read whole in one DoFn call.

package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	// Local files and Google Cloud Storage (gs://) are readable and
	// writable wherever the pipeline runs.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Record)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*DeadLetter)(nil)).Elem())
	register.DoFn4x1[context.Context, string, func(beam.EventTime, string, Record), func(DeadLetter), error](&readFileFn{})
	register.Emitter3[beam.EventTime, string, Record]()
	register.Emitter1[DeadLetter]()
}

// Source is one side of a join: JSON-lines files and where in each line the
// key and the event time are.
type Source struct {
	// Name prefixes the source's counters (namespace "beamjoin"):
	// Name_read counts lines read, Name_invalid the dead letters.
	// A join's sides are "left" and "right".
	Name string
	// Pattern is a file name or a glob (filepath.Match syntax), local or
	// in a registered Beam file system such as gs://.
	Pattern string
	// Fields say where the key and the event time are.
	Fields Fields
	// MaxLineBytes is the longest line read as a record; zero means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// Replay, when true, reads each file in line order as an event-time
	// stream whose watermark trails the largest time read so far by
	// WatermarkLag (bounded out-of-orderness). When false, each file is read
	// whole and downstream event time does not advance until every file has
	// been read: the result does not depend on the order of lines.
	Replay       bool
	WatermarkLag time.Duration
}

// Read reads src into keyed, timestamped records,
// PCollection<KV<string, Record>> with the key as canonical JSON text (see
// Fields.Parse) and the element timestamp the line's event time, and
// PCollection<DeadLetter> of the lines that are not records. Every line is
// in exactly one of them. Read panics if src is invalid or its pattern
// matches no file; TryRead returns the error.
//
//	orders, bad := jsonl.Read(s, jsonl.Source{Name: "left",
//		Pattern: "testdata/orders.jsonl", Fields: jsonl.Fields{Key: "order_id", Time: "ts"}})
func Read(s beam.Scope, src Source) (records, deadLetters beam.PCollection) {
	records, deadLetters, err := TryRead(s, src)
	if err != nil {
		panic(err)
	}
	return records, deadLetters
}

// TryRead is Read returning an error instead of panicking.
func TryRead(s beam.Scope, src Source) (records, deadLetters beam.PCollection, err error) {
	s = s.Scope("jsonl.Read")
	files, dir, err := src.files()
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	p := parser{Name: src.Name, Fields: src.Fields, MaxLineBytes: src.MaxLineBytes, Dir: dir}
	if p.MaxLineBytes == 0 {
		p.MaxLineBytes = DefaultMaxLineBytes
	}
	names := beam.Create(s, files...)
	if src.Replay {
		records, deadLetters = beam.ParDo2(s, &replayFn{P: p, LagMillis: src.WatermarkLag.Milliseconds()}, names)
		return records, deadLetters, nil
	}
	records, deadLetters = beam.ParDo2(s, &readFileFn{P: p}, beam.Reshuffle(s, names))
	return records, deadLetters, nil
}

// files validates src and expands its pattern, in sorted order. Relative
// local names stay relative (they name the file in dead letters) and are
// opened from dir, the working directory at construction.
func (src Source) files() (files []any, dir string, err error) {
	if src.Name == "" {
		return nil, "", fmt.Errorf("beamjoin: jsonl.Read: the source has no name")
	}
	if src.Pattern == "" {
		return nil, "", fmt.Errorf("beamjoin: %s: no file pattern", src.Name)
	}
	if err := src.Fields.Validate(); err != nil {
		return nil, "", fmt.Errorf("beamjoin: %s: %s", src.Name, strings.TrimPrefix(err.Error(), "beamjoin: "))
	}
	if src.MaxLineBytes < 0 {
		return nil, "", fmt.Errorf("beamjoin: %s: MaxLineBytes %d is negative", src.Name, src.MaxLineBytes)
	}
	if src.Replay && (src.WatermarkLag < 0 || src.WatermarkLag%time.Millisecond != 0) {
		return nil, "", fmt.Errorf("beamjoin: %s: watermark lag %v must be a non-negative whole number of milliseconds", src.Name, src.WatermarkLag)
	}
	ctx := context.Background()
	fs, err := filesystem.New(ctx, src.Pattern)
	if err != nil {
		return nil, "", fmt.Errorf("beamjoin: %s: %q: %w", src.Name, src.Pattern, err)
	}
	defer fs.Close()
	names, err := fs.List(ctx, src.Pattern)
	if err != nil {
		return nil, "", fmt.Errorf("beamjoin: %s: %q: %w", src.Name, src.Pattern, err)
	}
	if len(names) == 0 {
		return nil, "", fmt.Errorf("beamjoin: %s: %q matches no file", src.Name, src.Pattern)
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, n)
	}
	if isLocal(src.Pattern) {
		if dir, err = os.Getwd(); err != nil {
			return nil, "", fmt.Errorf("beamjoin: %s: %w", src.Name, err)
		}
	}
	return files, dir, nil
}

func isLocal(path string) bool { return !strings.Contains(path, "://") }

// parser turns the lines of one side into records and dead letters. Its
// exported fields are the DoFns' configuration.
type parser struct {
	Name         string
	Fields       Fields
	MaxLineBytes int
	Dir          string

	read, invalid beam.Counter
}

func (p *parser) setup() {
	p.read = beam.NewCounter("beamjoin", p.Name+"_read")
	p.invalid = beam.NewCounter("beamjoin", p.Name+"_invalid")
}

// open opens file at byte offset off.
func (p *parser) open(ctx context.Context, file string, off int64) (io.ReadCloser, error) {
	path := file
	if p.Dir != "" && isLocal(file) && !filepath.IsAbs(file) {
		path = filepath.Join(p.Dir, file)
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: %w", file, err)
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: %w", file, err)
	}
	if off > 0 {
		if sk, ok := r.(io.Seeker); ok {
			_, err = sk.Seek(off, io.SeekStart)
		} else {
			_, err = io.CopyN(io.Discard, r, off)
		}
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("beamjoin: %s: seeking to byte %d: %w", file, off, err)
		}
	}
	return r, nil
}

// handle emits one line as a record or a dead letter. It reports the
// record's time and whether it was one.
func (p *parser) handle(ctx context.Context, file string, l line, emit func(beam.EventTime, string, Record), dead func(DeadLetter)) (int64, bool) {
	p.read.Inc(ctx, 1)
	var err error
	var key string
	var ts int64
	switch {
	case l.TooLong:
		err = fmt.Errorf("line is %d bytes, over the %d-byte limit", l.Len, p.MaxLineBytes)
	case len(bytes.TrimSpace(l.Text)) == 0:
		err = fmt.Errorf("blank line")
	default:
		key, ts, err = p.Fields.Parse(l.Text)
	}
	if err != nil {
		p.invalid.Inc(ctx, 1)
		dead(DeadLetter{File: file, Line: l.Number, Error: err.Error(), Raw: string(l.Text)})
		return 0, false
	}
	raw := bytes.TrimSpace(l.Text)
	emit(mtime.Time(ts), key, Record{File: file, Line: l.Number, Raw: append([]byte(nil), raw...)})
	return ts, true
}

// readFileFn reads a file whole, in batch.
type readFileFn struct {
	P parser
}

func (f *readFileFn) Setup() { f.P.setup() }

func (f *readFileFn) ProcessElement(ctx context.Context, file string, emit func(beam.EventTime, string, Record), dead func(DeadLetter)) error {
	r, err := f.P.open(ctx, file, 0)
	if err != nil {
		return err
	}
	defer r.Close()
	lr := newLineReader(r, f.P.MaxLineBytes, 1, 0)
	for {
		l, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("beamjoin: %s:%d: %w", file, lr.number+1, err)
		}
		f.P.handle(ctx, file, l, emit, dead)
	}
}
