// This file holds the write stage: the join's records, its late elements
// with the lines the reader judged late, and the inputs' dead letters,
// each as JSON lines (the route's formats, and those of format.go) to where the plan's sinks say, a file
// (package jsonl) or a Pub/Sub topic (package pubsubio).

package jsonjoin

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function1x1(FormatDeadLetter)
	register.DoFn4x0[beam.EventTime, string, jsonl.Record, func(string)](&formatReaderLateFn{})
	register.Emitter1[string]()
}

// write is the write stage: the join's records (out.Records) to w.out,
// its late elements (out.Late, when the join has them) and the lines the
// reader judged late (each input's ReaderLate) to w.late, and the inputs'
// dead letters to w.deadLetter; the last two only when they are given.
func write(s beam.Scope, w sinksPlan, out join.Outputs, ins []input) error {
	if err := writeLines(s.Scope("out"), w.out, beam.ParDo(s, w.format, out.Records)); err != nil {
		return err
	}
	if w.late != (sink{}) {
		if err := writeLines(s.Scope("late"), w.late, lateLines(s, w.formatLate, out.Late, ins)); err != nil {
			return err
		}
	}
	if w.deadLetter != (sink{}) {
		var bad []beam.PCollection
		for _, in := range ins {
			bad = append(bad, in.DeadLetters)
		}
		if err := writeLines(s.Scope("deadletters"), w.deadLetter, beam.ParDo(s, FormatDeadLetter, beam.Flatten(s, bad...))); err != nil {
			return err
		}
	}
	return nil
}

// lateLines are the lines of the late output: the join's late elements,
// each written by format, and the lines the reader of each input judged
// late. A window join or a cogroup on the CoGroupByKey path has no late
// elements (nothing is late in files read whole): its late output is
// written empty.
func lateLines(s beam.Scope, format any, late beam.PCollection, ins []input) beam.PCollection {
	var all []beam.PCollection
	if late.IsValid() {
		all = append(all, beam.ParDo(s, format, late))
	}
	for i, in := range ins {
		if in.ReaderLate.IsValid() {
			// Only the reader of a join of two judges lateness.
			side := [...]join.Side{join.Left, join.Right}[i]
			all = append(all, beam.ParDo(s, &formatReaderLateFn{Side: side}, in.ReaderLate))
		}
	}
	switch len(all) {
	case 0:
		return beam.CreateList(s.Scope("late"), []string{})
	case 1:
		return all[0]
	}
	return beam.Flatten(s, all...)
}

// formatReaderLateFn writes a line of one side that the reader judged
// late (FormatReaderLate).
type formatReaderLateFn struct {
	Side join.Side
}

func (f *formatReaderLateFn) ProcessElement(et beam.EventTime, key string, r jsonl.Record, emit func(string)) {
	emit(FormatReaderLate(f.Side, key, et.ToTime(), r))
}

// writeLines writes lines to to: a Pub/Sub topic, one message each, or a
// file as jsonl.Write writes it.
func writeLines(s beam.Scope, to sink, lines beam.PCollection) error {
	if to.topic != "" {
		return pubsubio.TryWrite(s, to.topic, lines)
	}
	jsonl.Write(s, to.file, lines)
	return nil
}
