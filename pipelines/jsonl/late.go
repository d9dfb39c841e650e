// This file holds the replay's own judgement of lateness (Source.JudgeLate):
// a replay knows its watermark when it reads a line, so it can send a line
// far behind it to a late output of its own, the same way in every run,
// rather than leave a join to judge it from what it knows of the line's
// key.

package jsonl

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn3x0[beam.EventTime, sourcedRecord, func(beam.EventTime, string, Record)](&lateOfFn{})
	register.Function4x0(noLateFn)
}

// ReaderLate names what a replay judged late: the counter NAME_reader_late
// (namespace "beamjoin") counts a source's late records.
const ReaderLate = "reader_late"

// ReadAllWithLate is ReadAll for sources that may judge lateness
// (Source.JudgeLate): it also returns, at index i, the late records of
// srcs[i], PCollection<KV<string, Record>> as the records are, each with
// its event time, which is behind the watermark. A source that does not
// judge lateness, or is not replayed, has none. Every line is in exactly
// one of the records, the late records and the dead letters.
//
//	f := jsonl.Fields{Key: "order_id", Time: "ts"}
//	recs, late, bad := jsonl.ReadAllWithLate(s,
//		jsonl.Source{Name: "left", Pattern: "orders.jsonl", Fields: f, Replay: true,
//			WatermarkLag: 5 * time.Minute, JudgeLate: true, LateBehind: time.Minute},
//		jsonl.Source{Name: "right", Pattern: "payments.jsonl", Fields: f, Replay: true,
//			WatermarkLag: 5 * time.Minute, JudgeLate: true, LateBehind: time.Minute})
func ReadAllWithLate(s beam.Scope, srcs ...Source) (records, late, deadLetters []beam.PCollection) {
	records, late, deadLetters, err := TryReadAllWithLate(s, srcs...)
	if err != nil {
		panic(err)
	}
	return records, late, deadLetters
}

// TryReadAllWithLate is ReadAllWithLate returning an error instead of
// panicking.
func TryReadAllWithLate(s beam.Scope, srcs ...Source) (records, late, deadLetters []beam.PCollection, err error) {
	return tryReadAll(s.Scope("jsonl.ReadAll"), srcs, true)
}

// judge says whether a record at ts, read when the largest time read
// before it was maxTime (noTime: none), is late by the source's rule:
// more than LateBehind behind the watermark, maxTime less lag. It counts
// the late ones.
func (p *parser) judge(ctx context.Context, ts, maxTime, lag int64) bool {
	if !p.JudgeLate || maxTime == noTime || maxTime-lag-ts <= p.LateBehind {
		return false
	}
	p.late.Inc(ctx, 1)
	return true
}

// lateOfFn passes on the records of one source that the replay judged
// late, as recordsOfFn passes on the others.
type lateOfFn struct {
	Source int
}

func (f *lateOfFn) ProcessElement(et beam.EventTime, r sourcedRecord, emit func(beam.EventTime, string, Record)) {
	if r.Source == f.Source && r.Late {
		emit(et, r.Key, r.Record)
	}
}

// noLateFn is the late output of a source read whole: none.
func noLateFn(beam.EventTime, string, Record, func(beam.EventTime, string, Record)) {}
