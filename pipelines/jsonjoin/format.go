// This file holds how the command writes a record as a JSON line: the
// writer that the routes' formats use (FormatResult in interval.go,
// FormatWindowResult and FormatWindowLate in window.go, FormatGroup in
// cogroup.go), and the formats of the lines every route writes alike,
// those the reader judged late and dead letters.

package jsonjoin

import (
	"strconv"
	"strings"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// jsonWriter builds one output line by hand, so that the input objects are
// copied through byte for byte.
type jsonWriter struct{ strings.Builder }

func (w *jsonWriter) field(name string) {
	if w.Len() == 0 {
		w.WriteString("{")
	} else {
		w.WriteString(",")
	}
	w.WriteString(`"` + name + `":`)
}

func (w *jsonWriter) raw(name, v string) { w.field(name); w.WriteString(v) }

func (w *jsonWriter) str(name, v string) { w.raw(name, strconv.Quote(v)) }

func (w *jsonWriter) millis(name string, t time.Time) {
	w.raw(name, strconv.FormatInt(t.UnixMilli(), 10))
}

// value writes a record's object, or null when it is absent, and its time.
func (w *jsonWriter) value(name string, r *jsonl.Record) {
	if r == nil {
		w.raw(name, "null")
		return
	}
	w.raw(name, string(r.Raw))
}

func (w *jsonWriter) valueTime(name string, r *jsonl.Record, t time.Time) {
	if r == nil {
		w.raw(name, "null")
		return
	}
	w.millis(name, t)
}

func (w *jsonWriter) window(start, end time.Time) {
	w.raw("window", `{"start":`+strconv.FormatInt(start.UnixMilli(), 10)+`,"end":`+strconv.FormatInt(end.UnixMilli(), 10)+`}`)
}

func (w *jsonWriter) done() string { w.WriteString("}"); return w.String() }

// record writes the fields every join record has.
func (w *jsonWriter) record(r Result) {
	w.str("kind", r.Kind.String())
	w.raw("key", r.Key)
	w.value("left", r.Left)
	w.value("right", r.Right)
	w.valueTime("left_time", r.Left, r.LeftTime)
	w.valueTime("right_time", r.Right, r.RightTime)
	w.millis("time", r.Time)
}

// late writes the fields of a late element: its side, key, time and value.
func (w *jsonWriter) late(side join.Side, key string, t time.Time, left, right *jsonl.Record) {
	w.str("side", side.String())
	w.raw("key", key)
	w.millis("time", t)
	if side == join.Left {
		w.value("value", left)
	} else {
		w.value("value", right)
	}
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

// FormatDeadLetter writes a dead letter: {"file":…,"line":N,"error":"…","raw":"…"}.
func FormatDeadLetter(d jsonl.DeadLetter) string { return d.JSON() }
