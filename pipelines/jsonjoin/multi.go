package jsonjoin

// This file holds the multi-way join of the beamjoin multi command
// (join.Multi): its own configuration, MultiConfig, and RunMulti, which
// reads every input's files whole, joins them on the bounded path and
// writes rows, late elements and dead letters. It shares the reading,
// writing and dead-letter formats of the two-input joins, and nothing of
// Config, which the command's two-input routes are validated through.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Multi is join.Multi: the anchor's lines joined with the lines of each
// further input within its bounds of the anchor's time (MultiConfig).
const Multi Op = "multi"

func init() {
	join.RegisterMultiTypes[string, jsonl.Record]()
	register.Function1x1(FormatMultiResult)
	register.Function1x1(FormatMultiLate)
	register.DoFn3x0[context.Context, string, jsonl.Record](&countLinesFn{})
	register.DoFn2x0[context.Context, jsonl.DeadLetter](&countDeadFn{})
}

// MultiBounds are the bounds of one input after the first: an element at
// ts matches an anchor element at ts(a) iff Lower <= ts - ts(a) <= Upper.
type MultiBounds struct {
	Lower, Upper time.Duration
}

// MultiConfig is a multi-way join of JSON-lines inputs.
type MultiConfig struct {
	// Inputs are the inputs' file patterns, the anchor first.
	Inputs []string
	// Fields are where the key and the event time are in every input.
	Fields jsonl.Fields
	// Bounds are one per input after the first, in input order.
	Bounds []MultiBounds
	// Optional are the 1-based numbers of the optional inputs (never 1).
	Optional []int
	// Emit is the emission mode (the files are read whole and joined on
	// the bounded path, whose rows are those of join.EmitFinal in every
	// mode).
	Emit join.Emit
	// Out, Late and DeadLetter are as in Config.
	Out, Late, DeadLetter string
	// MaxLineBytes is the longest input line; zero is
	// jsonl.DefaultMaxLineBytes.
	MaxLineBytes int
}

// inputs are c's inputs as join.Multi takes them, over cols.
func (c MultiConfig) inputs(cols []beam.PCollection) []join.MultiInput {
	var out []join.MultiInput
	for i, b := range c.Bounds {
		between := join.Between(b.Lower, b.Upper)
		if slices.Contains(c.Optional, i+2) {
			out = append(out, join.Optional(cols[i+1], between))
		} else {
			out = append(out, join.Required(cols[i+1], between))
		}
	}
	return out
}

// Validate checks c: at least three inputs, one bounds per input after
// the first, optional inputs that exist and are not the anchor, and the
// join's own checks of the bounds.
func (c MultiConfig) Validate() error {
	switch {
	case len(c.Inputs) < 3:
		return fmt.Errorf("beamjoin: multi: %d inputs: give at least three --input (two are beamjoin interval's)", len(c.Inputs))
	case len(c.Bounds) != len(c.Inputs)-1:
		return fmt.Errorf("beamjoin: multi: %d --bounds for %d inputs: give one for each input after the first, in order", len(c.Bounds), len(c.Inputs))
	}
	for _, o := range c.Optional {
		if o < 2 || o > len(c.Inputs) {
			return fmt.Errorf("beamjoin: multi: --optional %d: give the number of an input after the first, 2 to %d (input 1 is the anchor)", o, len(c.Inputs))
		}
	}
	if err := c.Fields.Validate(); err != nil {
		return err
	}
	for i, b := range c.Bounds {
		if err := join.RouteInterval.Check(join.Between(b.Lower, b.Upper)); err != nil {
			return fmt.Errorf("beamjoin: multi: --bounds %v,%v of input %d: %s", b.Lower, b.Upper, i+2, strings.TrimPrefix(err.Error(), "beamjoin: "))
		}
	}
	return join.RouteMulti.Check(c.Emit)
}

// BuildMulti adds the join c describes to the pipeline.
func BuildMulti(s beam.Scope, c MultiConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	s = s.Scope("jsonjoin.multi")
	var srcs []jsonl.Source
	for i, p := range c.Inputs {
		srcs = append(srcs, jsonl.Source{Name: "input" + strconv.Itoa(i+1), Pattern: p, Fields: c.Fields, MaxLineBytes: c.MaxLineBytes})
	}
	records, dead, err := jsonl.TryReadAll(s, srcs...)
	if err != nil {
		return err
	}
	var cols []beam.PCollection
	for i := range records {
		beam.ParDo0(s, &countLinesFn{Input: i + 1}, records[i])
		beam.ParDo0(s, &countDeadFn{Input: i + 1}, dead[i])
		cols = append(cols, beam.ParDo(s.Scope(srcs[i].Name), dropOrigin, records[i]))
	}
	joined, err := join.TryMulti[string, jsonl.Record](s, cols[0], c.inputs(cols), c.Emit, join.Bounded())
	if err != nil {
		return err
	}
	out := c.Out
	if out == "" {
		out = "-"
	}
	if err := writeLines(s.Scope("out"), sink{file: out}, beam.ParDo(s, FormatMultiResult, joined.Records)); err != nil {
		return err
	}
	if c.Late != "" {
		if err := writeLines(s.Scope("late"), sink{file: c.Late}, beam.ParDo(s, FormatMultiLate, joined.Late)); err != nil {
			return err
		}
	}
	if c.DeadLetter != "" {
		if err := writeLines(s.Scope("deadletters"), sink{file: c.DeadLetter}, beam.ParDo(s, FormatDeadLetter, beam.Flatten(s, dead...))); err != nil {
			return err
		}
	}
	return nil
}

// MultiSummary is what a multi-way join did, from the runner's Beam
// counters: per input (1-based) lines read and invalid, elements in and
// late; rows out.
type MultiSummary struct {
	Read, Invalid, In, Late []int64
	Rows                    int64
}

// String writes the summary as beamjoin multi prints it.
func (m MultiSummary) String() string {
	var b strings.Builder
	for i := range m.Read {
		fmt.Fprintf(&b, "input %d: %d lines read, %d invalid, %d joined, %d late\n", i+1, m.Read[i], m.Invalid[i], m.In[i], m.Late[i])
	}
	fmt.Fprintf(&b, "rows: %d\n", m.Rows)
	return b.String()
}

// RunMulti runs the join c describes on runner and returns its summary.
func RunMulti(ctx context.Context, c MultiConfig, runner string) (MultiSummary, error) {
	if runner == "" {
		runner = DefaultRunner
	}
	if err := c.Validate(); err != nil {
		return MultiSummary{}, &ConfigError{Err: err}
	}
	for _, p := range c.Inputs {
		if err := checkInput(p); err != nil {
			return MultiSummary{}, &ConfigError{Err: err}
		}
	}
	p, s := beam.NewPipelineWithRoot()
	if err := BuildMulti(s, c); err != nil {
		return MultiSummary{}, &ConfigError{Err: err}
	}
	pr, err := prismrun.Run(ctx, runner, p, func(attempt int, err error) {
		fmt.Fprintf(os.Stderr, "beamjoin: Prism v2.77 failed the job with a known bug of its own (%s), not a fault of the data; running it again (attempt %d of %d)\n", prismrun.KnownBug(err), attempt, prismrun.Attempts)
	})
	if err != nil {
		return MultiSummary{}, fmt.Errorf("beamjoin: pipeline failed: %w", err)
	}
	n := len(c.Inputs)
	sum := MultiSummary{Read: make([]int64, n), Invalid: make([]int64, n), In: make([]int64, n), Late: make([]int64, n)}
	if pr == nil {
		return sum, nil
	}
	for _, r := range pr.Metrics().AllMetrics().Counters() {
		if r.Key.Namespace != join.Namespace {
			continue
		}
		var i int
		var what string
		if _, err := fmt.Sscanf(r.Key.Name, "multi_input%d_%s", &i, &what); err == nil && i >= 1 && i <= n {
			switch what {
			case "read":
				sum.Read[i-1] += r.Result()
			case "invalid":
				sum.Invalid[i-1] += r.Result()
			case "in":
				sum.In[i-1] += r.Result()
			case "late":
				sum.Late[i-1] += r.Result()
			}
		}
		if r.Key.Name == "multi_rows_out" {
			sum.Rows += r.Result()
		}
	}
	return sum, nil
}

// countLinesFn counts an input's valid lines.
type countLinesFn struct{ Input int }

func (f *countLinesFn) ProcessElement(ctx context.Context, _ string, _ jsonl.Record) {
	beam.NewCounter(join.Namespace, fmt.Sprintf("multi_input%d_read", f.Input)).Inc(ctx, 1)
}

// countDeadFn counts an input's invalid lines, which are read too.
type countDeadFn struct{ Input int }

func (f *countDeadFn) ProcessElement(ctx context.Context, _ jsonl.DeadLetter) {
	beam.NewCounter(join.Namespace, fmt.Sprintf("multi_input%d_read", f.Input)).Inc(ctx, 1)
	beam.NewCounter(join.Namespace, fmt.Sprintf("multi_input%d_invalid", f.Input)).Inc(ctx, 1)
}

// FormatMultiResult writes a row of the multi-way join:
// {"key":K,"records":[{…},null,…],"times":[MS,null,…]}, with "kind":"retract"
// first for a withdrawn row (EmitRetract).
func FormatMultiResult(r join.MultiResult[string, jsonl.Record]) string {
	var w jsonWriter
	if r.Kind == join.KindRetract {
		w.str("kind", "retract")
	}
	w.raw("key", r.Key)
	recs, times := make([]string, len(r.Values)), make([]string, len(r.Values))
	for i, v := range r.Values {
		if v == nil {
			recs[i], times[i] = "null", "null"
			continue
		}
		recs[i], times[i] = string(v.Raw), strconv.FormatInt(r.Times[i].UnixMilli(), 10)
	}
	w.raw("records", "["+strings.Join(recs, ",")+"]")
	w.raw("times", "["+strings.Join(times, ",")+"]")
	return w.done()
}

// FormatMultiLate writes a late element of the multi-way join:
// {"input":I,"key":K,"time":MS,"record":{…}}, I 1-based.
func FormatMultiLate(l join.MultiLateElement[string, jsonl.Record]) string {
	var w jsonWriter
	w.raw("input", strconv.Itoa(l.Input+1))
	w.raw("key", l.Key)
	w.millis("time", l.Time)
	w.raw("record", string(l.Value.Raw))
	return w.done()
}
