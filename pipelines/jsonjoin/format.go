// This file holds the JSON form of every record the command writes.

package jsonjoin

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// The record types of the joins of JSON lines: the key is canonical JSON
// text (see jsonl.Fields.Parse), both values are jsonl.Records.
type (
	// Result is an interval join record.
	Result = join.Result[string, jsonl.Record, jsonl.Record]
	// LateElement is an element the interval join judged late.
	LateElement = join.LateElement[string, jsonl.Record, jsonl.Record]
	// WindowResult is a window join record.
	WindowResult = join.WindowResult[string, jsonl.Record, jsonl.Record]
	// Group is a cogroup record.
	Group = join.Group[string, jsonl.Record, jsonl.Record]
	// WindowLateElement is an element the window join or the cogroup
	// judged late, with the window it missed.
	WindowLateElement = join.WindowLateElement[string, jsonl.Record, jsonl.Record]
	// Fate is what became of an element that reached the window join or
	// the cogroup.
	Fate = join.Fate[string]
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

// FormatResult writes an interval join record:
// {"kind":"pair","key":K,"left":{…},"right":{…},"left_time":MS,"right_time":MS,"time":MS}.
// kind is "pair", "unmatched" or "retract"; an absent side and its time
// are null.
func FormatResult(r Result) string {
	var w jsonWriter
	w.record(r)
	return w.done()
}

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

// FormatWindowResult writes a window join record: FormatResult's fields and
// "window":{"start":MS,"end":MS}, the window [start, end). time is the
// window's max timestamp, end - 1.
func FormatWindowResult(r WindowResult) string {
	var w jsonWriter
	w.record(Result{Kind: r.Kind, Key: r.Key, Left: r.Left, Right: r.Right, LeftTime: r.LeftTime, RightTime: r.RightTime, Time: r.Time})
	w.window(r.WindowStart, r.WindowEnd)
	return w.done()
}

// FormatGroup writes a cogroup record:
// {"kind":"group","key":K,"left":[…],"right":[…],"time":MS,"window":{"start":MS,"end":MS}}.
// Each side's objects are sorted by file, then line, then the object's
// bytes (Beam's grouping keeps no order, and two Pub/Sub messages can
// share a line number), so the same group always prints the same; time
// is the window's max timestamp.
func FormatGroup(g Group) string {
	var w jsonWriter
	w.str("kind", "group")
	w.raw("key", g.Key)
	w.raw("left", array(g.Left))
	w.raw("right", array(g.Right))
	w.millis("time", g.WindowEnd.Add(-time.Millisecond))
	w.window(g.WindowStart, g.WindowEnd)
	return w.done()
}

func array(rs []jsonl.Record) string {
	rs = append([]jsonl.Record(nil), rs...)
	slices.SortFunc(rs, func(a, b jsonl.Record) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), bytes.Compare(a.Raw, b.Raw))
	})
	var b strings.Builder
	b.WriteString("[")
	for i, r := range rs {
		if i > 0 {
			b.WriteString(",")
		}
		b.Write(r.Raw)
	}
	b.WriteString("]")
	return b.String()
}

// FormatLate writes a late element: {"side":"left","key":K,"time":MS,"value":{…}}.
func FormatLate(l LateElement) string {
	var w jsonWriter
	w.late(l.Side, l.Key, l.Time, l.Left, l.Right)
	return w.done()
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

// FormatWindowLate writes an element that the window join or the cogroup
// judged late: FormatLate's fields and "window":{"start":MS,"end":MS}, the
// window it missed. With sliding windows an element can miss several
// windows, one line each, and still be in others.
func FormatWindowLate(l WindowLateElement) string {
	var w jsonWriter
	w.late(l.Side, l.Key, l.Time, l.Left, l.Right)
	w.window(l.WindowStart, l.WindowEnd)
	return w.done()
}

// FormatDeadLetter writes a dead letter: {"file":…,"line":N,"error":"…","raw":"…"}.
func FormatDeadLetter(d jsonl.DeadLetter) string { return d.JSON() }
