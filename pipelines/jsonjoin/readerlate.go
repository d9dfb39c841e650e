// This file holds the reader's judgement of lateness in an interval join of
// replayed files: the replay knows its watermark when it reads a line, so
// it sends a line that the join would judge late, had its cleanup reached
// that watermark, to the late output itself (jsonl.Source.JudgeLate), on
// any key, the same way in every run. Those lines go to the same late
// file, in the same shape plus "judged_by":"reader", and are counted per
// side as reader_late.

package jsonjoin

import (
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.DoFn4x0[beam.EventTime, string, jsonl.Record, func(string)](&formatReaderLateFn{})
	register.DoFn4x0[beam.EventTime, string, jsonl.Record, func(string, tally)](&countReaderLateFn{})
	register.Emitter1[string]()
}

// countReaderLate is the name of the count of a side's lines that the
// reader judged late ("left_reader_late"), and of its Beam counter.
const countReaderLate = jsonl.ReaderLate

// judgesLate says whether the reader of c's files judges lateness: for an
// interval or as-of join of replayed files. (A window join's lateness
// depends on the window, which the reader does not know.)
func (c Config) judgesLate() bool { return (c.Op == Interval || c.Op == AsOf) && c.Replay }

// withReaderLate adds to lines, the join's late records formatted, the
// late records of each side that the reader judged (input.ReaderLate, when
// valid), and returns them with the tallies that count them.
func (c Config) withReaderLate(s beam.Scope, lines beam.PCollection, left, right input) (beam.PCollection, []beam.PCollection) {
	all := []beam.PCollection{lines}
	var counts []beam.PCollection
	for _, sd := range []struct {
		side join.Side
		in   input
	}{{join.Left, left}, {join.Right, right}} {
		side, in := sd.side, sd.in
		if !in.ReaderLate.IsValid() {
			continue
		}
		all = append(all, beam.ParDo(s, &formatReaderLateFn{Side: side}, in.ReaderLate))
		counts = append(counts, beam.ParDo(s, &countReaderLateFn{Side: side.String(), counter: counter{Hub: c.hub}}, global(s, in.ReaderLate)))
	}
	if len(all) == 1 {
		return lines, nil
	}
	return beam.Flatten(s, all...), counts
}

// formatReaderLateFn writes a line of one side that the reader judged
// late: FormatLate's fields and "judged_by":"reader".
type formatReaderLateFn struct {
	Side join.Side
}

func (f *formatReaderLateFn) ProcessElement(et beam.EventTime, key string, r jsonl.Record, emit func(string)) {
	emit(FormatReaderLate(f.Side, key, et.ToTime(), r))
}

// FormatReaderLate writes an element that the reader of a replay judged
// late (see the package doc's Replay): FormatLate's fields and
// "judged_by":"reader", {"side":"left","key":K,"time":MS,"value":{…},"judged_by":"reader"}.
func FormatReaderLate(side join.Side, key string, t time.Time, r jsonl.Record) string {
	var w jsonWriter
	left, right := &r, (*jsonl.Record)(nil)
	if side == join.Right {
		left, right = nil, &r
	}
	w.late(side, key, t, left, right)
	w.str("judged_by", "reader")
	return w.done()
}

// countReaderLateFn counts a side's lines that the reader judged late, as
// reader_late and as late records written (late_out), and feeds the
// progress hub: they are lines read.
type countReaderLateFn struct {
	Side string
	counter
}

func (f *countReaderLateFn) ProcessElement(t beam.EventTime, _ string, _ jsonl.Record, _ func(string, tally)) {
	f.hub.line(f.Side, t.Milliseconds())
	f.counts.add(f.Side+"_"+countReaderLate, tally{N: 1})
	f.counts.add(f.Side+"_"+countLateOut, tally{N: 1})
}
