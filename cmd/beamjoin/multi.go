// This file holds the multi subcommand's own parts: its flags'
// translation into a jsonjoin.Config, the usage errors that name them,
// and its help text. Its flags are registered with the others (register,
// flags.go); it has --input, not --left and --right.

package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

func init() {
	examples[jsonjoin.Multi] = multiUsage
}

// multi sets the multi-way join's settings of c from the flags: every
// input with the same --key and --time, the anchor first; one bounds per
// further input. What the values may be (three inputs or more, one
// --bounds each, --optional among them) is the Config's to check.
func (f *cmdFlags) multi(c *jsonjoin.Config) error {
	fields := jsonl.Fields{Key: *f.key, Time: *f.tim}
	for _, p := range f.inputs {
		c.Inputs = append(c.Inputs, jsonjoin.Input{Pattern: p, Fields: fields})
	}
	for _, b := range f.bounds {
		lo, hi, ok := strings.Cut(b, ",")
		l, err1 := time.ParseDuration(strings.TrimSpace(lo))
		h, err2 := time.ParseDuration(strings.TrimSpace(hi))
		if !ok || err1 != nil || err2 != nil {
			return usagef("--bounds %s: want LO,HI, two Go durations (e.g. 0,10m or -5m,5m)", b)
		}
		c.Bounds = append(c.Bounds, jsonjoin.Bounds{Lower: l, Upper: h})
	}
	for _, o := range f.optional {
		i, err := strconv.Atoi(o)
		if err != nil {
			return usagef("--optional %s: want an input's number, 2 or more (input 1 is the anchor)", o)
		}
		c.Optional = append(c.Optional, i)
	}
	c.Emit = f.emit
	c.Late = *f.late
	return nil
}

// multiFieldError is the usage error for a Config field of the
// multi-way join that Validate rejected, naming the flag that set it, or
// nil for a field that the other subcommands' flags set too.
func (f *cmdFlags) multiFieldError(fe *jsonjoin.FieldError) error {
	field, sub, _ := strings.Cut(fe.Field, ".")
	name, i := field, -1
	if open := strings.IndexByte(field, '['); open >= 0 {
		name = field[:open]
		i, _ = strconv.Atoi(strings.TrimSuffix(field[open+1:], "]"))
	}
	switch {
	case name == "Inputs" && i < 0:
		return usagef("--input: %s", fe.Reason)
	case name == "Inputs" && (sub == "Fields.Key" || sub == "Fields.Time"):
		what, value := "key", *f.key
		if sub == "Fields.Time" {
			what, value = "time", *f.tim
		}
		if value == "" {
			return usagef("--%s is required: the %s FIELD of every input (e.g. --key user --time ts)", what, what)
		}
		return usagef("--%s %s: %s", what, value, fe.Reason)
	case name == "Inputs" && i < len(f.inputs):
		return usagef("--input %s: %s", f.inputs[i], fe.Reason)
	case name == "Bounds" && i < 0:
		return usagef("--bounds: %s (e.g. --bounds 0,10m --bounds 0,24h for three inputs)", fe.Reason)
	case name == "Bounds" && i < len(f.bounds):
		return usagef("--bounds %s (input %d): %s", f.bounds[i], i+2, fe.Reason)
	case name == "Optional" && i >= 0 && i < len(f.optional):
		return usagef("--optional %s: %s", f.optional[i], fe.Reason)
	}
	return nil
}

const multiUsage = `Usage: beamjoin multi --input FILE --input FILE [--input FILE ...] --key FIELD --time FIELD \
    --bounds LO,HI [--bounds LO,HI ...] [--optional I ...] [--emit final] [--out FILE]

Joins three or more inputs on one key in one step (join.Multi): input 1 is
the anchor; each further input has bounds LO,HI (Go durations, inclusive)
on its time less the anchor object's, given in input order, and is required
unless --optional names it (1-based). For each anchor object, one row per
combination of one matching object of each input, null for an optional
input without one; none if a required input has none: the SQL
  a JOIN b ON ... LEFT JOIN c ON ...
with every condition on the key and the anchor's time.

Example:
  # Impressions, the clicks 0 to 10 minutes after them, and the
  # conversions within a day, when there are any.
  beamjoin multi --input testdata/impressions.jsonl --input testdata/clicks.jsonl \
    --input testdata/conversions.jsonl --key user --time ts \
    --bounds 0,10m --bounds 0,24h --optional 3 --emit final

Output, one row per line (records and times in input order; "kind":"retract"
first for a row withdrawn under --emit retract):
  {"key":K,"records":[{...},{...},null],"times":[MS,MS,null]}
Late elements (--late): {"input":I,"key":K,"time":MS,"record":{...}}
Dead letters (--dead-letter): {"file":"...","line":N,"error":"...","raw":"..."}

Files read whole are joined in batch: every --emit mode gives the final
rows, and nothing is late. With --watermark-lag the files are replayed as
one stream and joined on state and timers; the join judges lateness itself
(the reader does not, as it does for interval), so which objects are late
may differ between runs. The summary on standard error has a line per
input, input1 to inputN: objects read, joined, their fates (matched,
unmatched: an anchor whose row has only nulls, expired, late), invalid.
`
