package jsonjoin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	// Every runner the command can name with --runner, and the file
	// systems they read from.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterTypes[string, jsonl.Record, jsonl.Record]()
	register.Function1x1(FormatResult)
	register.Function1x1(FormatWindowResult)
	register.Function1x1(FormatGroup)
	register.Function1x1(FormatLate)
	register.Function1x1(FormatWindowLate)
	register.Function1x1(FormatDeadLetter)
	register.Function2x2(dropOrigin)
}

// Build adds the join that c describes to the pipeline: it reads both
// inputs, joins them, and writes the results, the late elements and the
// dead letters where c says, and the run's accounting to c.Accounting when
// it is set. It returns an error, and adds nothing that matters, when c is
// invalid or an input pattern matches no file.
func Build(s beam.Scope, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	s = s.Scope("jsonjoin." + string(c.Op))
	// Files are read together: a replay is one stream of both inputs,
	// with one watermark (see jsonl.ReadAll). Subscriptions are streams
	// of their own (pubsub.go).
	left, right, err := c.read(s)
	if err != nil {
		return err
	}
	// counts are the tallies of the accounting (accounting.go): every line
	// read, and every record made.
	counts := []beam.PCollection{
		beam.ParDo(s, &countRecordFn{Side: "left", counter: counter{Hub: c.hub}}, global(s, left.Records)),
		beam.ParDo(s, &countDeadLetterFn{Side: "left", Key: c.Left.Fields.Key, Time: c.Left.Fields.Time, counter: counter{Hub: c.hub}}, global(s, left.DeadLetters)),
		beam.ParDo(s, &countRecordFn{Side: "right", counter: counter{Hub: c.hub}}, global(s, right.Records)),
		beam.ParDo(s, &countDeadLetterFn{Side: "right", Key: c.Right.Fields.Key, Time: c.Right.Fields.Time, counter: counter{Hub: c.hub}}, global(s, right.DeadLetters)),
	}
	var out beam.PCollection
	opts := c.joinOptions()
	switch c.Op {
	case Interval:
		switch {
		case c.streamingBatch:
			// Files read whole on the streaming path, for benchmarks:
			// bounded input takes the bounded path unless told.
			opts = append(opts, join.Streaming())
		case !c.Replay && !c.Streaming():
			// Files read whole are bounded: join them by grouping per key
			// (join.Bounded), not with state, tens of times faster.
			opts = append(opts, join.Bounded())
		}
		// The interval join's records are written from the lines alone
		// (FormatResult, FormatLate), so the file and line number of each
		// are not carried through the join, where they would be held in
		// state or grouped for nothing (a third of the bytes of a short
		// line on a long path).
		l, r := beam.ParDo(s.Scope("left"), dropOrigin, left.Records), beam.ParDo(s.Scope("right"), dropOrigin, right.Records)
		joined, err := join.TryInterval[string, jsonl.Record, jsonl.Record](s, l, r, opts...)
		if err != nil {
			return err
		}
		if out, err = c.writeJoined(s, joined, left, right, &counts); err != nil {
			return err
		}
	case AsOf:
		if out, err = c.buildAsOf(s, left, right, &counts); err != nil {
			return err
		}
	case Window:
		joined, err := join.TryWindow[string, jsonl.Record, jsonl.Record](s, left.Records, right.Records, append(opts, c.lateOptions()...)...)
		if err != nil {
			return err
		}
		out = beam.ParDo(s, FormatWindowResult, joined.Records)
		counts = append(counts, beam.ParDo(s, &countWindowResultFn{counter: counter{Hub: c.hub}}, global(s, joined.Records)))
		late, err := c.windowLate(s, joined.Late, joined.Fates)
		if err != nil {
			return err
		}
		counts = append(counts, late...)
	case CoGroup:
		joined, err := join.TryCoGroup[string, jsonl.Record, jsonl.Record](s, left.Records, right.Records, append(opts, c.lateOptions()...)...)
		if err != nil {
			return err
		}
		out = beam.ParDo(s, FormatGroup, joined.Records)
		counts = append(counts, beam.ParDo(s, &countGroupFn{counter: counter{Hub: c.hub}}, global(s, joined.Records)))
		late, err := c.windowLate(s, joined.Late, joined.Fates)
		if err != nil {
			return err
		}
		counts = append(counts, late...)
	}
	path := c.Out
	if path == "" {
		path = "-"
	}
	if err := write(s.Scope("out"), path, out); err != nil {
		return err
	}
	if c.DeadLetter != "" {
		bad := beam.Flatten(s, left.DeadLetters, right.DeadLetters)
		if err := write(s.Scope("deadletters"), c.DeadLetter, beam.ParDo(s, FormatDeadLetter, bad)); err != nil {
			return err
		}
	}
	if c.Accounting != "" && !c.Streaming() {
		account(s, c.Accounting, counts)
	}
	return nil
}

// dropOrigin keeps of a record only its line: Raw, not File and Line.
func dropOrigin(key string, r jsonl.Record) (string, jsonl.Record) {
	return key, jsonl.Record{Raw: r.Raw}
}

// lateOptions are the options that put a window join or a cogroup on its
// late-counting path (join.ReportLate, join.TrackFates): for a replay or a
// stream, where elements can come after their window closed. Files read
// whole are bounded, nothing in them is late, and the join takes the
// CoGroupByKey path, which counts no fates (the summary then shows none).
func (c Config) lateOptions() []join.Option {
	if !c.Replay && !c.streamingBatch && !c.Streaming() {
		return nil
	}
	return []join.Option{join.ReportLate(), join.TrackFates()}
}

// windowLate writes the late elements of a window join or cogroup where c
// says, and returns the tallies of the accounting that count them and the
// fates of every element. On the CoGroupByKey path (late and fates are
// not valid: see lateOptions) nothing is late: the late output is
// written empty, and nothing is counted.
func (c Config) windowLate(s beam.Scope, late, fates beam.PCollection) ([]beam.PCollection, error) {
	if !late.IsValid() {
		if c.Late == "" {
			return nil, nil
		}
		none := beam.CreateList(s.Scope("late"), []WindowLateElement{})
		return nil, write(s.Scope("late"), c.Late, beam.ParDo(s, FormatWindowLate, none))
	}
	if c.Late != "" {
		if err := write(s.Scope("late"), c.Late, beam.ParDo(s, FormatWindowLate, late)); err != nil {
			return nil, err
		}
	}
	return []beam.PCollection{
		beam.ParDo(s, &countWindowLateFn{}, global(s, late)),
		beam.ParDo(s, &countFateFn{}, global(s, fates)),
		fatesCounted(s),
	}, nil
}

// global puts col in the global window, the accounting's: the counting
// DoFns emit their tallies when a bundle finishes, in the global window.
func global(s beam.Scope, col beam.PCollection) beam.PCollection {
	return beam.WindowInto(s, window.NewGlobalWindows(), col)
}

// DefaultRunner is the runner Run uses when it is given none: Prism, the
// Go SDK's portable runner, started in process with LOOPBACK workers.
const DefaultRunner = "prism"

// DefaultProgressEvery is how often Run reports progress when
// Config.ProgressEvery is zero.
const DefaultProgressEvery = 5 * time.Second

// Run builds the join that c describes in a new pipeline and runs it on
// runner, the name of a runner registered with the Beam Go SDK ("prism",
// "flink", "dataflow", "universal", …; "" is DefaultRunner). The runner's
// own settings (--endpoint, --project, --experiments, …) are Beam's flags.
// It returns the summary of the run; the error is a pipeline failure, or a
// *ConfigError when c is invalid (see Validate), could not be built, or
// names files that cannot be read or written (see CheckFiles).
//
// The summary is counted from the run's records (see Config.Accounting):
// when c.Accounting is empty and the runner's workers share this machine's
// files, Run writes it to a temporary file; when they do not, the summary
// is the runner's counters. A runner that runs nothing (Dataflow's
// --dry_run) gives a summary whose Ran is false.
//
// When c.Progress is set and the workers run in this process, Run calls it
// every c.ProgressEvery while the job runs, and once when it is done.
//
// On Prism, run with --experiments=prism_disable_sdf_split (the beamjoin
// command sets it): Prism v2.77 loses or repeats the interval join's timer
// work when it splits a bundle that holds timers (apache/beam#35771).
//
// When Prism fails the job with one of its known bugs (its progress race,
// or declaring the job stuck: see package internal/prismrun), Run says so
// on standard error and runs the pipeline again: the results are written
// only when a run succeeds, so nothing is written twice.
//
// A streaming job (c reads a Pub/Sub subscription, see Config.Streaming)
// runs until ctx is cancelled, and then Run returns ErrStopped, unless
// the runner submits it asynchronously (Beam's --async): then Run returns
// once it is submitted, with its ID in Summary.JobID. It is not
// run again when Prism fails it (its messages would not be read again),
// and its summary has no counts (a stream's combines never end), but,
// when its workers ran in this process, the progress it had made
// (Summary.Stream).
func Run(ctx context.Context, c Config, runner string) (Summary, error) {
	if runner == "" {
		runner = DefaultRunner
	}
	workers := WorkersOf(runner)
	if err := c.Validate(); err != nil {
		return Summary{}, &ConfigError{Err: err}
	}
	if err := c.CheckFiles(workers); err != nil {
		return Summary{}, &ConfigError{Err: err}
	}
	if c.Accounting == "" && workers != Remote && !c.Streaming() {
		dir, err := os.MkdirTemp("", "beamjoin-accounting-")
		if err != nil {
			return Summary{}, fmt.Errorf("beamjoin: a directory for the run's accounting: %w", err)
		}
		defer os.RemoveAll(dir)
		c.Accounting = filepath.Join(dir, "accounting.jsonl")
	}
	var h *hub
	if (c.Progress != nil || c.Streaming()) && workers == InProcess {
		var id string
		id, h = registerHub()
		defer hubs.Delete(id)
		c.hub = id
	}

	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, c); err != nil {
		return Summary{}, &ConfigError{Err: err}
	}
	if h != nil && c.Progress != nil {
		every := c.ProgressEvery
		if every <= 0 {
			every = DefaultProgressEvery
		}
		stop := make(chan struct{})
		done := watch(h, every, c.Progress, stop)
		defer func() { close(stop); <-done }()
	}
	if c.Streaming() {
		start := time.Now()
		jobID, err := runStreaming(ctx, runner, p)
		sum := Summary{Op: c.Op, Ran: true, JobID: jobID}
		if h != nil {
			p := h.progress(time.Since(start))
			p.Done = true
			sum.Stream = &p
		}
		return sum, err
	}
	pr, err := prismrun.Run(ctx, runner, p, func(attempt int, err error) {
		fmt.Fprintf(os.Stderr, "beamjoin: Prism v2.77 failed the job with a known bug of its own (%s), not a fault of the data; running it again (attempt %d of %d)\n", prismrun.KnownBug(err), attempt, prismrun.Attempts)
		if h != nil {
			h.reset()
		}
	})
	if err != nil {
		if bug := prismrun.KnownBug(err); bug != "" {
			// Prism's own error is a panic and its stack, or a dump of
			// its stages: say what it means in one line.
			return Summary{}, fmt.Errorf("beamjoin: Prism v2.77 failed the job %d times with a known bug of its own (%s, likelier on a busy machine), not a fault of the data; rerunning is safe: every output is written whole", prismrun.Attempts, bug)
		}
		return Summary{}, fmt.Errorf("beamjoin: pipeline failed: %w", err)
	}
	switch {
	case pr == nil:
		return Summary{Op: c.Op}, nil
	case c.Accounting == "":
		return summarizeCounters(c.Op, pr), nil
	}
	return ReadSummary(ctx, c)
}

// ConfigError is a Config that could not be built into a pipeline.
type ConfigError struct{ Err error }

// Error returns the text of the error that stopped the build.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the error that stopped the build.
func (e *ConfigError) Unwrap() error { return e.Err }
