// This file holds the as-of join of two JSON-lines inputs (Op AsOf, the
// beamjoin command's asof): its options, their checks, and its part of
// Build. What it shares with the interval join (the record and late
// formats, the reader's lateness, the accounting) is writeJoined's.

package jsonjoin

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// validateAsOf is Validate for an as-of join: no window, no interval
// bounds, no buffer cap, no allowed lateness; the join type, emission
// mode and max age are join.RouteAsOf's to check.
func (c Config) validateAsOf(check func(...join.Option) error) error {
	switch {
	case c.Size != 0 || c.Slide != 0 || c.Gap != 0:
		return invalid("Size", "", "an as-of join takes no window")
	case c.Lower != 0 || c.Upper != 0 || c.LowerExclusive || c.UpperExclusive:
		return invalid("Lower", "", "an as-of join takes no interval bounds: a left line joins the latest version at or before its time")
	case c.MaxBufferedPerKey != 0:
		return invalid("MaxBufferedPerKey", "", "an as-of join takes no buffer cap: it keeps only the versions a left line may still need")
	case c.AllowedLateness != 0:
		return invalid("AllowedLateness", "", "an as-of join takes no allowed lateness")
	case c.UniqueLeft:
		return invalid("UniqueLeft", "", "an as-of join takes no unique-left declaration: it is the interval join's")
	case c.MaxAge != 0 && !c.LimitAge:
		return invalid("MaxAge", "", fmt.Sprintf("max age %v without LimitAge, which makes it a limit", c.MaxAge))
	}
	return check(c.asofOptions()...)
}

// asofOptions are the join.AsOf options of c. EmitImmediate, the zero
// value, is left out: the join's default is EmitFinal.
func (c Config) asofOptions() []join.Option {
	opts := []join.Option{c.Type}
	if c.Emit != join.EmitImmediate {
		opts = append(opts, c.Emit)
	}
	if c.LimitAge {
		opts = append(opts, join.MaxAge(c.MaxAge))
	}
	if c.Strict {
		opts = append(opts, join.Strict())
	}
	return opts
}

// asofSpan is the span that sets a replayed as-of join's watermark step
// (watermarkStep): the watermark lag, and at least a second. A left line
// waits for the watermark to pass it, which trails the lines by the lag
// anyway; finer steps would only cost checkpoints.
func asofSpan(lag time.Duration) time.Duration { return max(lag, time.Second) }

// buildAsOf is Build's as-of join of left and right: files read whole
// are bounded, and joined by grouping per key (join.Bounded); a replay or
// a stream is joined on state and timers. The reader of a replay judges
// lateness (readerlate.go): a line behind the watermark when it is read
// is late. That is the join's own rule (an element before its key's
// latest timer firing is late) at the watermark, the most any key's
// firings can reach, so which lines are late does not depend on timing.
func (c Config) buildAsOf(s beam.Scope, left, right input, counts *[]beam.PCollection) (beam.PCollection, error) {
	opts := c.asofOptions()
	if !c.Replay && !c.Streaming() {
		opts = append(opts, join.Bounded())
	}
	// As for Interval, records are written from the lines alone; and the
	// tie rule (the greater encoded version wins) must see the line
	// alone, or two versions of one time would be told apart by their
	// line numbers, which depend on the order of the file.
	l, r := beam.ParDo(s.Scope("left"), dropOrigin, left.Records), beam.ParDo(s.Scope("right"), dropOrigin, right.Records)
	joined, err := join.TryAsOf[string, jsonl.Record, jsonl.Record](s, l, r, opts...)
	if err != nil {
		return beam.PCollection{}, err
	}
	return c.writeJoined(s, joined, left, right, counts)
}

// writeJoined formats the records of an interval or as-of join (returned,
// for Build to write) and writes its late elements, with those the reader
// judged late, to c.Late; it adds the tallies that count them to counts.
func (c Config) writeJoined(s beam.Scope, joined join.Outputs, left, right input, counts *[]beam.PCollection) (beam.PCollection, error) {
	out := beam.ParDo(s, FormatResult, joined.Records)
	*counts = append(*counts, beam.ParDo(s, &countResultFn{counter: counter{Hub: c.hub}}, global(s, joined.Records)),
		beam.ParDo(s, &countLateFn{}, global(s, joined.Late)))
	lateLines, readerCounts := c.withReaderLate(s, beam.ParDo(s, FormatLate, joined.Late), left, right)
	*counts = append(*counts, readerCounts...)
	if c.Late != "" {
		if err := write(s.Scope("late"), c.Late, lateLines); err != nil {
			return beam.PCollection{}, err
		}
	}
	return out, nil
}
