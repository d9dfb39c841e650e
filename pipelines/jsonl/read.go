// This file holds Read, the source of keyed, timestamped records, and the
// batch reader: each file read whole in one DoFn call.

package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
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
	// Replay, when true, reads the files in line order as an event-time
	// stream whose watermark trails the largest time read so far by
	// WatermarkLag (bounded out-of-orderness), reported each time that
	// time has risen by WatermarkStep (zero: DefaultWatermarkStep) and
	// enough data has been read (see the package doc). When false, each
	// file is read whole and downstream event time does not advance until
	// every file has been read: the result does not depend on the order
	// of lines. Sources read together by ReadAll are replayed as one
	// stream, with one watermark, and must agree on these three settings.
	Replay        bool
	WatermarkLag  time.Duration
	WatermarkStep time.Duration
	// JudgeLate, with Replay, makes the replay judge the source's lateness
	// itself: a record more than LateBehind behind the watermark the
	// replay has reached when it reads the line (the largest time read
	// before it less WatermarkLag) is not one of the source's records but
	// one of its late records, which ReadAllWithLate returns (Read and
	// ReadAll reject a source that judges lateness). Which lines are late
	// depends only on the files and the settings. A join sets LateBehind
	// by its own rule (join.LateBehind for join.Interval), so that a line
	// is late here iff the join, had its cleanup reached the watermark,
	// would judge it late; see the package doc.
	JudgeLate  bool
	LateBehind time.Duration
	// MaxSkew, with Replay, bounds how far ahead of the stream a record's
	// event time is taken to be, so that one bad time (milliseconds
	// written as microseconds, a year mistyped) does not move the
	// watermark for good and make the lines after it late. A record more
	// than MaxSkew ahead of the largest time the replay took in is still a
	// record, but the watermark does not take its time, unless five such
	// records come in a row (the data itself moved on: a gap in it); and
	// while the next line of another file is within the bound, it is
	// replayed at once rather than holding the rest of its file back
	// until the stream reaches its time. Such records are counted
	// (NAME_skewed). Zero bounds nothing. Sources replayed together
	// share it.
	MaxSkew time.Duration
}

// Read reads src into keyed, timestamped records,
// PCollection<KV<string, Record>> with the key as canonical JSON text (see
// Fields.Parse) and the element timestamp the line's event time, and
// PCollection<DeadLetter> of the lines that are not records. Every line is
// in exactly one of them. Read panics if src is invalid or its pattern
// matches no file; TryRead returns the error. To replay the two sides of a
// join as one stream, read them together with ReadAll.
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
	rs, _, ds, err := tryReadAll(s.Scope("jsonl.Read"), []Source{src}, false)
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	return rs[0], ds[0], nil
}

// ReadAll reads several sources as Read reads one, returning the records
// and the dead letters of srcs[i] at index i. Read in batch, the sources
// are read independently. Replayed, they are one stream: every file of
// every source is replayed by one reader, merged by event time, with one
// watermark, so that which lines are behind the watermark when they come
// depends only on the files and the settings (see the package doc).
// ReadAll panics if a source is invalid, its pattern matches no file, two
// sources share a name, or they do not agree on Replay, WatermarkLag and
// WatermarkStep; TryReadAll returns the error.
//
//	recs, bad := jsonl.ReadAll(s,
//		jsonl.Source{Name: "left", Pattern: "orders.jsonl", Fields: f, Replay: true, WatermarkLag: 5 * time.Minute},
//		jsonl.Source{Name: "right", Pattern: "payments.jsonl", Fields: f, Replay: true, WatermarkLag: 5 * time.Minute})
//	orders, payments := recs[0], recs[1]
func ReadAll(s beam.Scope, srcs ...Source) (records, deadLetters []beam.PCollection) {
	records, deadLetters, err := TryReadAll(s, srcs...)
	if err != nil {
		panic(err)
	}
	return records, deadLetters
}

// TryReadAll is ReadAll returning an error instead of panicking.
func TryReadAll(s beam.Scope, srcs ...Source) (records, deadLetters []beam.PCollection, err error) {
	records, _, deadLetters, err = tryReadAll(s.Scope("jsonl.ReadAll"), srcs, false)
	return records, deadLetters, err
}

// tryReadAll reads srcs; late is nil unless withLate, and a source that
// judges lateness is an error without it.
func tryReadAll(s beam.Scope, srcs []Source, withLate bool) (records, late, deadLetters []beam.PCollection, err error) {
	if len(srcs) == 0 {
		return nil, nil, nil, fmt.Errorf("beamjoin: jsonl.ReadAll: no source")
	}
	parsers := make([]parser, len(srcs))
	files := make([][]string, len(srcs))
	for i, src := range srcs {
		if files[i], parsers[i].Dir, err = src.files(); err != nil {
			return nil, nil, nil, err
		}
		parsers[i].Name, parsers[i].Fields, parsers[i].MaxLineBytes = src.Name, src.Fields, src.MaxLineBytes
		parsers[i].JudgeLate, parsers[i].LateBehind = src.JudgeLate, src.LateBehind.Milliseconds()
		if parsers[i].MaxLineBytes == 0 {
			parsers[i].MaxLineBytes = DefaultMaxLineBytes
		}
		first := srcs[0]
		switch {
		case i > 0 && slices.ContainsFunc(srcs[:i], func(o Source) bool { return o.Name == src.Name }):
			return nil, nil, nil, fmt.Errorf("beamjoin: two sources are named %q: their counters would mix", src.Name)
		case src.Replay != first.Replay:
			return nil, nil, nil, fmt.Errorf("beamjoin: %s and %s: read together, both are replayed or neither is", first.Name, src.Name)
		case src.Replay && src.WatermarkLag != first.WatermarkLag:
			return nil, nil, nil, fmt.Errorf("beamjoin: %s and %s: replayed together, they have one watermark, so one lag (%v and %v)", first.Name, src.Name, first.WatermarkLag, src.WatermarkLag)
		case src.Replay && src.WatermarkStep != first.WatermarkStep:
			return nil, nil, nil, fmt.Errorf("beamjoin: %s and %s: replayed together, they have one watermark, so one step (%v and %v)", first.Name, src.Name, first.WatermarkStep, src.WatermarkStep)
		case src.Replay && src.MaxSkew != first.MaxSkew:
			return nil, nil, nil, fmt.Errorf("beamjoin: %s and %s: replayed together, they have one watermark, so one skew bound (%v and %v)", first.Name, src.Name, first.MaxSkew, src.MaxSkew)
		case src.JudgeLate && !withLate:
			return nil, nil, nil, fmt.Errorf("beamjoin: %s judges lateness: read it with jsonl.ReadAllWithLate, which returns its late records", src.Name)
		}
	}
	if srcs[0].Replay {
		records, late, deadLetters = replayAll(s, srcs[0], parsers, files, withLate)
		return records, late, deadLetters, nil
	}
	for i, p := range parsers {
		var names []any
		for _, n := range files[i] {
			names = append(names, n)
		}
		si := s.Scope(p.Name)
		rs, ds := beam.ParDo2(si, &readFileFn{P: p}, beam.Reshuffle(si, beam.Create(si, names...)))
		records, deadLetters = append(records, rs), append(deadLetters, ds)
		if withLate {
			late = append(late, beam.ParDo(si, noLateFn, rs))
		}
	}
	return records, late, deadLetters, nil
}

// replayAll adds the replay of the files of every source: one replayFn,
// whose outputs are then split by source, late records too withLate.
func replayAll(s beam.Scope, settings Source, parsers []parser, files [][]string, withLate bool) (records, late, deadLetters []beam.PCollection) {
	fn := &replayFn{Sources: parsers, LagMillis: settings.WatermarkLag.Milliseconds(), StepMillis: settings.WatermarkStep.Milliseconds(),
		MaxSkewMillis: settings.MaxSkew.Milliseconds()}
	if settings.WatermarkStep == 0 {
		fn.StepMillis = DefaultWatermarkStep.Milliseconds()
	}
	for i, names := range files {
		for _, n := range names {
			fn.Files = append(fn.Files, replayFile{Source: i, Name: n})
		}
	}
	all, bad := beam.ParDo2(s, fn, beam.Impulse(s))
	for i, p := range parsers {
		si := s.Scope(p.Name)
		records = append(records, beam.ParDo(si, &recordsOfFn{Source: i}, all))
		if withLate {
			late = append(late, beam.ParDo(si, &lateOfFn{Source: i}, all))
		}
		deadLetters = append(deadLetters, beam.ParDo(si, &deadLettersOfFn{Source: i}, bad))
	}
	return records, late, deadLetters
}

// SourceError is a Source that cannot be read, found before anything is
// read: Field names the Source field at fault as a Go selector ("Name",
// "Pattern", "Fields.Key", "Fields.Time", "MaxLineBytes", "WatermarkLag",
// "WatermarkStep", "JudgeLate", "LateBehind" or "MaxSkew"), and Reason says what is
// wrong with its value.
type SourceError struct {
	Source, Field, Reason string
	msg                   string
}

// Error names the source and says what is wrong.
func (e *SourceError) Error() string { return e.msg }

// sourceError is a SourceError whose message is the source's name, what
// (the field in words and its value, or ""), and the reason.
func sourceError(src, field, what, reason string) *SourceError {
	msg := "beamjoin: " + src + ": " + reason
	if what != "" {
		msg = "beamjoin: " + src + ": " + what + " " + reason
	}
	return &SourceError{Source: src, Field: field, Reason: reason, msg: msg}
}

// Validate reports, as a *SourceError, a source that cannot be read
// whatever its files hold: no name or pattern, a bad field path, a
// negative line limit, a watermark setting, lateness rule or skew bound
// that is not whole non-negative milliseconds, or lateness judged or a
// skew bound given without a replay.
// Read and ReadAll call it; so may a caller that builds sources from its
// own configuration and wants the errors before it builds a pipeline.
func (src Source) Validate() error {
	name := src.Name
	switch {
	case name == "":
		return sourceError("jsonl.Read", "Name", "", "the source has no name")
	case src.Pattern == "":
		return sourceError(name, "Pattern", "", "no file pattern")
	}
	for _, p := range []struct{ field, what, path string }{{"Fields.Key", "key", src.Fields.Key}, {"Fields.Time", "time", src.Fields.Time}} {
		if reason := checkPath(p.what, p.path); reason != "" {
			return sourceError(name, p.field, "", reason)
		}
	}
	wholeMillis := func(d time.Duration) bool { return d >= 0 && d%time.Millisecond == 0 }
	switch {
	case src.MaxLineBytes < 0:
		return sourceError(name, "MaxLineBytes", fmt.Sprint("MaxLineBytes ", src.MaxLineBytes), "is negative")
	case src.Replay && !wholeMillis(src.WatermarkLag):
		return sourceError(name, "WatermarkLag", fmt.Sprint("watermark lag ", src.WatermarkLag), "must be a non-negative whole number of milliseconds")
	case src.Replay && !wholeMillis(src.WatermarkStep):
		return sourceError(name, "WatermarkStep", fmt.Sprint("watermark step ", src.WatermarkStep), "must be a non-negative whole number of milliseconds")
	case src.JudgeLate && !src.Replay:
		return sourceError(name, "JudgeLate", "", "only a replay judges lateness: a source read whole has no watermark to judge it by")
	case !src.JudgeLate && src.LateBehind != 0:
		return sourceError(name, "LateBehind", fmt.Sprint("LateBehind ", src.LateBehind), "is set, but JudgeLate is not")
	case !wholeMillis(src.LateBehind):
		return sourceError(name, "LateBehind", fmt.Sprint("LateBehind ", src.LateBehind), "must be a non-negative whole number of milliseconds")
	case src.MaxSkew != 0 && !src.Replay:
		return sourceError(name, "MaxSkew", fmt.Sprint("skew bound ", src.MaxSkew), "is set, but only a replay has a watermark for it to guard: a source read whole moves event time only at its end")
	case !wholeMillis(src.MaxSkew):
		return sourceError(name, "MaxSkew", fmt.Sprint("skew bound ", src.MaxSkew), "must be a non-negative whole number of milliseconds")
	}
	return nil
}

// files validates src and expands its pattern, in sorted order. Relative
// local names stay relative (they name the file in dead letters) and are
// opened from dir, the working directory at construction.
func (src Source) files() (files []string, dir string, err error) {
	if err := src.Validate(); err != nil {
		return nil, "", err
	}
	ctx := context.Background()
	fs, err := filesystem.New(ctx, src.Pattern)
	if err != nil {
		return nil, "", fmt.Errorf("beamjoin: %s: %q: %w", src.Name, src.Pattern, err)
	}
	defer fs.Close()
	files, err = fs.List(ctx, src.Pattern)
	if err != nil {
		return nil, "", fmt.Errorf("beamjoin: %s: %q: %w", src.Name, src.Pattern, err)
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("beamjoin: %s: %q matches no file", src.Name, src.Pattern)
	}
	sort.Strings(files)
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
	JudgeLate    bool  // see Source.JudgeLate
	LateBehind   int64 // milliseconds

	read, invalid, late, skewed beam.Counter
}

func (p *parser) setup() {
	p.read = beam.NewCounter("beamjoin", p.Name+"_read")
	p.invalid = beam.NewCounter("beamjoin", p.Name+"_invalid")
	p.late = beam.NewCounter("beamjoin", p.Name+"_"+ReaderLate)
	p.skewed = beam.NewCounter("beamjoin", p.Name+"_skewed")
}

// parse reads a line's key and time, or says why it is not a record.
func (p *parser) parse(l line) (key string, ts int64, err error) {
	switch {
	case l.TooLong:
		return "", 0, fmt.Errorf("line is %d bytes, over the %d-byte limit", l.Len, p.MaxLineBytes)
	case len(bytes.TrimSpace(l.Text)) == 0:
		return "", 0, fmt.Errorf("blank line")
	}
	return p.Fields.Parse(l.Text)
}

// emit counts a parsed line and, if it is not a record, sends it to dead;
// if it is, it returns the record.
func (p *parser) emit(ctx context.Context, file string, h headLine, dead func(DeadLetter)) (Record, bool) {
	p.read.Inc(ctx, 1)
	if h.err != nil {
		p.invalid.Inc(ctx, 1)
		dead(DeadLetter{File: file, Line: h.l.Number, Error: h.err.Error(), Raw: string(h.l.Text)})
		return Record{}, false
	}
	raw := bytes.TrimSpace(h.l.Text)
	return Record{File: file, Line: h.l.Number, Raw: append([]byte(nil), raw...)}, true
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
		h := headLine{l: l}
		h.key, h.ts, h.err = f.P.parse(l)
		if rec, ok := f.P.emit(ctx, file, h, dead); ok {
			emit(mtime.Time(h.ts), h.key, rec)
		}
	}
}
