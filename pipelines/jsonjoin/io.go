// This file holds where a join's data comes from and where it goes: each
// input read from files (jsonl) or from a subscription (pubsub.go), each
// output written to a file (jsonl) or to a topic (pubsub.go).

package jsonjoin

import (
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// input is one side of a join as read: its records, keyed and
// timestamped, and the lines or messages that are not records.
type input struct {
	Records, DeadLetters beam.PCollection
	// ReaderLate, valid only when the reader judges lateness
	// (c.judgesLate, readerlate.go), holds the records the reader sent to
	// the late output instead of Records.
	ReaderLate beam.PCollection
}

// read reads both inputs: files through jsonl (together, so that a replay
// has one watermark), subscriptions through pubsubio.
func (c Config) read(s beam.Scope) (left, right input, err error) {
	sides := [2]*input{&left, &right}
	var files []jsonl.Source
	var at []int
	for i, in := range []Input{c.Left, c.Right} {
		name := [2]string{"left", "right"}[i]
		sub, ok := pubsubName(in.Pattern)
		if !ok {
			files = append(files, c.source(name, in))
			at = append(at, i)
			continue
		}
		if sides[i].Records, sides[i].DeadLetters, err = c.readPubSub(s.Scope(name), name, sub, in.Fields); err != nil {
			return left, right, err
		}
	}
	if len(files) == 0 {
		return left, right, nil
	}
	records, late, bad, err := c.readFiles(s, files)
	if err != nil {
		return left, right, err
	}
	for j, i := range at {
		sides[i].Records, sides[i].DeadLetters = records[j], bad[j]
		if late != nil {
			sides[i].ReaderLate = late[j]
		}
	}
	return left, right, nil
}

// readFiles reads the file sources srcs together; when c.judgesLate, each
// judges lateness by join.LateBehind of its side and c's join, and late
// holds their late records, by index as srcs; otherwise late is nil.
func (c Config) readFiles(s beam.Scope, srcs []jsonl.Source) (records, late, deadLetters []beam.PCollection, err error) {
	if !c.judgesLate() {
		records, deadLetters, err = jsonl.TryReadAll(s, srcs...)
		return records, nil, deadLetters, err
	}
	for i := range srcs {
		side := join.Left
		if srcs[i].Name == "right" {
			side = join.Right
		}
		srcs[i].JudgeLate = true
		if c.Op == AsOf {
			continue // asofLateBehind: 0
		}
		if srcs[i].LateBehind, err = join.LateBehind(side, c.joinOptions()...); err != nil {
			return nil, nil, nil, err
		}
	}
	return jsonl.TryReadAllWithLate(s, srcs...)
}

// source is the jsonl source of one side's files. A skew bound guards a
// replay's watermark; files read whole have none to guard (checkPubSub
// refuses a bound for a join that has neither a replay nor a stream).
func (c Config) source(side string, in Input) jsonl.Source {
	src := jsonl.Source{
		Name:          side,
		Pattern:       in.Pattern,
		Fields:        in.Fields,
		MaxLineBytes:  c.MaxLineBytes,
		Replay:        c.Replay,
		WatermarkLag:  c.WatermarkLag,
		WatermarkStep: c.watermarkStep(),
	}
	if c.Replay {
		src.MaxSkew = c.MaxSkew
	}
	return src
}

// watermarkStep is how far a replay's event time must rise between two
// watermark reports: a quarter of the time an element waits in the join
// for partners (the interval's width plus the allowed lateness), or of
// the time between two window ends (the slide, the size, or the session
// gap), and at least a millisecond. Finer reports would let the join
// clean up or close windows a little sooner, at the cost of a checkpoint
// each; coarser ones would hold more buffered state.
func (c Config) watermarkStep() time.Duration {
	span := c.Upper - c.Lower + c.AllowedLateness
	switch {
	case c.Op == AsOf:
		span = asofSpan(c.WatermarkLag)
	case c.Op != Interval && c.Gap != 0:
		span = c.Gap
	case c.Op != Interval && c.Slide != 0:
		span = c.Slide
	case c.Op != Interval:
		span = c.Size
	}
	return max(span/4/time.Millisecond*time.Millisecond, time.Millisecond)
}

// write writes lines to path: a Pub/Sub topic, or a file as jsonl.Write
// writes it.
func write(s beam.Scope, path string, lines beam.PCollection) error {
	if topic, ok := pubsubName(path); ok {
		return writeTopic(s, topic, lines)
	}
	jsonl.Write(s, path, lines)
	return nil
}
