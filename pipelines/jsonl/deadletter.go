package jsonl

import (
	"strconv"
	"strings"
)

// DeadLetter is an input line that could not be joined, and why.
type DeadLetter struct {
	// File and Line say where the line is (Line is 1-based).
	File string
	Line int64
	// Error says what is wrong, naming the field when one is at fault,
	// e.g. `field "ts": missing`.
	Error string
	// Raw is the line as read; for a line over the size limit, its first
	// 4 KiB. Bytes that are not UTF-8 are written as U+FFFD.
	Raw string
}

// JSON returns the dead letter as one JSON object:
// {"file":…,"line":N,"error":"…","raw":"…"}.
func (d DeadLetter) JSON() string {
	var b strings.Builder
	b.WriteString(`{"file":`)
	b.WriteString(marshalString(d.File))
	b.WriteString(`,"line":`)
	b.WriteString(strconv.FormatInt(d.Line, 10))
	b.WriteString(`,"error":`)
	b.WriteString(marshalString(d.Error))
	b.WriteString(`,"raw":`)
	b.WriteString(marshalString(d.Raw))
	b.WriteString("}")
	return b.String()
}

// String returns the dead letter in the form of an error message:
// "orders.jsonl:17: field "ts": missing".
func (d DeadLetter) String() string {
	return d.File + ":" + strconv.FormatInt(d.Line, 10) + ": " + d.Error
}
