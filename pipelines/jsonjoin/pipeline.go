package jsonjoin

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	// Every runner the command can name with --runner, and the file
	// systems they read from.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	for _, t := range []any{Result{}, LateElement{}, WindowResult{}, Group{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
	register.Function1x1(FormatResult)
	register.Function1x1(FormatWindowResult)
	register.Function1x1(FormatGroup)
	register.Function1x1(FormatLate)
	register.Function1x1(FormatDeadLetter)
}

// Build adds the join that c describes to the pipeline: it reads both
// inputs, joins them, and writes the results, the late elements and the
// dead letters where c says. It returns an error, and adds nothing that
// matters, when c is invalid or an input pattern matches no file.
func Build(s beam.Scope, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	s = s.Scope("jsonjoin." + string(c.Op))
	left, leftBad, err := jsonl.TryRead(s.Scope("left"), c.source("left", c.Left))
	if err != nil {
		return err
	}
	right, rightBad, err := jsonl.TryRead(s.Scope("right"), c.source("right", c.Right))
	if err != nil {
		return err
	}

	var out beam.PCollection
	switch c.Op {
	case Interval:
		opts := []join.Option{join.Between(c.Lower, c.Upper), c.Type, c.Emit}
		if c.LowerExclusive {
			opts = append(opts, join.LowerExclusive)
		}
		if c.UpperExclusive {
			opts = append(opts, join.UpperExclusive)
		}
		if c.AllowedLateness != 0 {
			opts = append(opts, join.AllowedLateness(c.AllowedLateness))
		}
		if c.MaxBufferedPerKey != 0 {
			opts = append(opts, join.MaxBufferedPerKey(c.MaxBufferedPerKey))
		}
		results, late, err := join.TryInterval[string, jsonl.Record, jsonl.Record](s, left, right, opts...)
		if err != nil {
			return err
		}
		out = beam.ParDo(s, FormatResult, results)
		if c.Late != "" {
			jsonl.Write(s.Scope("late"), c.Late, beam.ParDo(s, FormatLate, late))
		}
	case Window:
		results, err := join.TryWindow[string, jsonl.Record, jsonl.Record](s, left, right, c.Type, join.WindowInto(c.windowFn()))
		if err != nil {
			return err
		}
		out = beam.ParDo(s, FormatWindowResult, results)
	case CoGroup:
		groups, err := join.TryCoGroup[string, jsonl.Record, jsonl.Record](s, left, right, join.WindowInto(c.windowFn()))
		if err != nil {
			return err
		}
		out = beam.ParDo(s, FormatGroup, groups)
	}
	path := c.Out
	if path == "" {
		path = "-"
	}
	jsonl.Write(s.Scope("out"), path, out)
	if c.DeadLetter != "" {
		bad := beam.Flatten(s, leftBad, rightBad)
		jsonl.Write(s.Scope("deadletters"), c.DeadLetter, beam.ParDo(s, FormatDeadLetter, bad))
	}
	return nil
}

func (c Config) source(side string, in Input) jsonl.Source {
	return jsonl.Source{
		Name:         side,
		Pattern:      in.Pattern,
		Fields:       in.Fields,
		MaxLineBytes: c.MaxLineBytes,
		Replay:       c.Replay,
		WatermarkLag: c.WatermarkLag,
	}
}

func (c Config) windowFn() *window.Fn {
	switch {
	case c.Gap > 0:
		return window.NewSessions(c.Gap)
	case c.Slide > 0:
		return window.NewSlidingWindows(c.Slide, c.Size)
	}
	return window.NewFixedWindows(c.Size)
}

// DefaultRunner is the runner used when Beam's --runner flag is empty:
// Prism, the Go SDK's portable runner, started in process with LOOPBACK
// workers.
const DefaultRunner = "prism"

// Run builds the join that c describes in a new pipeline and runs it on the
// runner named by Beam's --runner flag (Prism, in process, when it is
// empty). It returns the counters of the run; the error is a pipeline
// failure, or a *ConfigError when c could not be built.
func Run(ctx context.Context, c Config) (Summary, error) {
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, c); err != nil {
		return Summary{}, &ConfigError{Err: err}
	}
	runner := *runners.Runner
	if runner == "" {
		runner = DefaultRunner
	}
	switch runner {
	case "prism", "PrismRunner", "universal", "portable", "PortableRunner":
		// Prism in process, or a job server that may well be a stand-alone
		// Prism; other job servers ignore the experiment.
		preventPrismSplits()
	}
	pr, err := beam.Run(ctx, runner, p)
	if err != nil {
		return Summary{}, fmt.Errorf("beamjoin: pipeline failed: %w", err)
	}
	return summarize(c.Op, pr), nil
}

// preventPrismSplits turns off Prism's dynamic splitting of bundles
// (experiment prism_disable_sdf_split). When a bundle of the interval
// join's stateful DoFn is slow, Prism splits it, and a split of a bundle
// that holds timers loses or repeats work (apache/beam#35771): measured
// here as duplicated pairs and missing fates under --watermark-lag.
func preventPrismSplits() {
	const exp = "prism_disable_sdf_split"
	if !slices.Contains(jobopts.GetExperiments(), exp) {
		*jobopts.Experiments = strings.Join(append(jobopts.GetExperiments(), exp), ",")
	}
}

// ConfigError is a Config that could not be built into a pipeline.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }

func (e *ConfigError) Unwrap() error { return e.Err }
