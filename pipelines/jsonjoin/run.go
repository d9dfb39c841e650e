// This file holds Run: a join planned for a runner (planRun), built
// (Build's stages), run, and summed up.

package jsonjoin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

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
	p, err := planRun(c, runner)
	if err != nil {
		return Summary{}, &ConfigError{Err: err}
	}
	if p.run.tempAccounting {
		dir, err := os.MkdirTemp("", "beamjoin-accounting-")
		if err != nil {
			return Summary{}, fmt.Errorf("beamjoin: a directory for the run's accounting: %w", err)
		}
		defer os.RemoveAll(dir)
		p.accounting.path = filepath.Join(dir, "accounting.jsonl")
	}
	var sides []string
	for _, sd := range p.accounting.sides {
		sides = append(sides, sd.name)
	}
	var h *hub
	if p.run.hub {
		var id string
		id, h = registerHub(sides)
		defer hubs.Delete(id)
		p.accounting.hub = id
	}

	pipeline, s := beam.NewPipelineWithRoot()
	if err := build(s, p); err != nil {
		return Summary{}, &ConfigError{Err: err}
	}
	if h != nil && p.run.progress != nil {
		stop := make(chan struct{})
		done := watch(h, p.run.progressEvery, p.run.progress, stop)
		defer func() { close(stop); <-done }()
	}
	if p.streaming {
		start := time.Now()
		jobID, err := runStreaming(ctx, p.run.runner, pipeline)
		sum := Summary{Op: p.op, Sides: summarySides(sides), Ran: true, JobID: jobID}
		if h != nil {
			p := h.progress(time.Since(start))
			p.Done = true
			sum.Stream = &p
		}
		return sum, err
	}
	pr, err := prismrun.Run(ctx, p.run.runner, pipeline, func(attempt int, err error) {
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
		return Summary{Op: p.op, Sides: summarySides(sides)}, nil
	case p.accounting.path == "":
		return summarizeCounters(p.op, sides, pr), nil
	}
	return readSummary(ctx, p.op, sides, p.accounting.path)
}

// ConfigError is a Config that could not be built into a pipeline.
type ConfigError struct{ Err error }

// Error returns the text of the error that stopped the build.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the error that stopped the build.
func (e *ConfigError) Unwrap() error { return e.Err }

// ErrStopped is what Run returns when the context of a streaming job (see
// Config.Streaming) is cancelled: the way such a job ends.
var ErrStopped = errors.New("beamjoin: the streaming join was stopped")

// runStreaming runs a streaming job once: it reads messages that a second
// run would not see again (they are acknowledged), so Prism's known bugs
// are not retried (see internal/prismrun) but reported. It returns the
// runner's ID of the job when the runner returned while the job runs on
// (an asynchronous submission).
func runStreaming(ctx context.Context, runner string, p *beam.Pipeline) (jobID string, err error) {
	prismrun.QuietInTests()
	pr, err := beam.Run(ctx, runner, p)
	bug := prismrun.KnownBug(err)
	switch {
	case ctx.Err() != nil:
		return "", ErrStopped
	case bug != "":
		return "", fmt.Errorf("beamjoin: Prism v2.77 failed the streaming job with a known bug of its own (%s), not a fault of the data; a stream is not run again by itself: run the command again to go on from the messages not yet acknowledged", bug)
	case err != nil:
		return "", fmt.Errorf("beamjoin: pipeline failed: %w", err)
	case pr != nil && *jobopts.Async:
		return pr.JobID(), nil
	}
	return "", nil
}
