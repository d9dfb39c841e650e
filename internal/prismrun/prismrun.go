// Package prismrun runs beamjoin's pipelines on Prism v2.77 around two Prism
// bugs that can fail a job, at random, on a busy machine.
//
// # The bug
//
// Prism runs some steps itself rather than in an SDK worker: GroupByKey,
// Flatten and Reshuffle. For each bundle it starts a progress ticker
// (100 ms at first) and then waits for the bundle to finish. A step Prism
// runs itself has finished before the wait begins, but if the goroutine is
// descheduled for longer than the tick between starting the ticker and
// waiting, the tick is ready too, and one time in three Prism asks the step's
// worker for progress. There is no worker: a nil-pointer panic in
// stage.Execute, and the job fails (runners/prism/internal/stage.go,
// (*stage).Execute). No option changes the tick, and every join runs at
// least one such step (the Flatten of its two inputs). Measured here: a
// 150 ms stall injected at that point fails every job; on a 2-core machine
// under a load average of 5 to 16 it failed one `make test` in two and a
// 6.5-minute replay of the beamjoin command.
//
// # The way around
//
// The panic happens before the step's output is committed and says nothing
// about the pipeline, so running the pipeline again is safe wherever its
// output is written only when the run succeeds (passert checks, and the
// beamjoin command's files, which are written once at the end). Run does
// that: it runs the pipeline again, up to Attempts times in all, when and
// only when the job failed with this panic. Any other failure, an assertion
// failure among them, is returned at once.
//
// # A second bug: Prism declares the job stuck
//
// Now and then (8 of 265 runs of the README's replay example, three at a
// time on 2 cores) Prism fails a job with "nothing in
// progress and no refreshes with non zero pending elements" and a dump of
// its stages: its scheduler found no bundle in progress and no watermark
// to refresh while elements were still pending, which its own comment
// calls a bug in Prism. The outputs of the attempt wait for the end of the
// input, which it never reached, so Run runs the pipeline again for this
// failure too (IsStuck, KnownBug).
//
// The stage dump names the keys Prism holds as raw bytes. When they are not
// UTF-8, Prism's job service cannot send the failure at all, and the client
// gets only gRPC's "string field contains invalid UTF-8" (seen once in CI,
// in the Flink suite's Prism run of the interval join). Run then takes the
// failure from Prism's own "job failed" log line, which passes through this
// process's default slog handler, and treats it as above.
//
// Tests use the runner this package registers, Runner, in their TestMain:
//
//	func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismrun.Runner) }
package prismrun

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"

	// Prism, in process.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// Runner is the name under which this package registers Prism in process
// with the retry of Run, for ptest.MainWithDefault and beam.Run.
const Runner = "prism-retry"

// Attempts is how many times Run runs a pipeline at most.
const Attempts = 5

// NoSplits is the Prism experiment that turns dynamic bundle splitting off.
// Prism v2.77 splits a slow bundle of a stateful DoFn and can then lose or
// repeat its timer work (apache/beam#35771); every beamjoin test runs with
// it.
const NoSplits = "prism_disable_sdf_split"

func init() {
	beam.RegisterRunner(Runner, func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
		if !hasExperiment(NoSplits) {
			*jobopts.Experiments = strings.Join(append(jobopts.GetExperiments(), NoSplits), ",")
		}
		return Run(ctx, "prism", p, func(attempt int, err error) {
			fmt.Fprintf(os.Stderr, "prismrun: Prism failed the job with a known bug of its own (%s); running it again (attempt %d of %d)\n", KnownBug(err), attempt, Attempts)
		})
	})
}

func hasExperiment(name string) bool {
	for _, e := range jobopts.GetExperiments() {
		if e == name {
			return true
		}
	}
	return false
}

// IsProgressRace reports whether err is a job failure caused by Prism's
// progress race (see the package documentation): a panic in stage.Execute
// from asking a missing worker for progress.
func IsProgressRace(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "panic in stage.Execute") &&
		strings.Contains(msg, "(*B).Progress") &&
		strings.Contains(msg, "nil pointer dereference")
}

// IsStuck reports whether err is a job failure in which Prism declared the
// job stuck: no bundle in progress and no watermark left to refresh while
// elements are still pending. Prism's own comment on that check says that
// jobs must never get stuck and that it indicates a bug in Prism
// (engine.ElementManager.checkForQuiescence). Seen here in 8 of 265 runs
// of the README's replay example, three at a time on 2 cores, before this
// package retried it; the stage dump showed the join's stateful stage with
// elements pending by key and none scheduled. The failed attempt has
// written nothing, since its outputs wait for the end of input that it
// never reached.
func IsStuck(err error) bool {
	return err != nil && strings.Contains(err.Error(), "nothing in progress and no refreshes with non zero pending elements")
}

// KnownBug says which of the Prism bugs that Run runs a job again for
// failed the job with err, in a few words, or returns "" when err is none
// of them (or nil).
func KnownBug(err error) string {
	switch {
	case IsProgressRace(err):
		return "a progress request to a step it runs itself"
	case IsStuck(err):
		return "it declared the job stuck with elements still pending"
	}
	return ""
}

// Run runs p on the named runner. When the job fails with one of the
// known Prism bugs (see KnownBug: the progress race, or Prism declaring
// the job stuck) it calls retrying, if not nil, and runs p again, up to
// Attempts times in all; the error after the last attempt says what
// happened. Any other result is returned as it is.
//
// Under `go test` without -v, Run first turns Prism's log down to warnings
// (see QuietInTests).
func Run(ctx context.Context, runner string, p *beam.Pipeline, retrying func(attempt int, err error)) (beam.PipelineResult, error) {
	QuietInTests()
	return run(ctx, func(ctx context.Context) (beam.PipelineResult, error) { return beam.Run(ctx, runner, p) }, retrying)
}

func run(ctx context.Context, execute func(context.Context) (beam.PipelineResult, error), retrying func(int, error)) (beam.PipelineResult, error) {
	for attempt := 1; ; attempt++ {
		since := watchFailures()
		pr, err := execute(ctx)
		err = recovered(err, since)
		bug := KnownBug(err)
		if bug == "" || ctx.Err() != nil {
			return pr, err
		}
		if attempt == Attempts {
			return pr, fmt.Errorf("beamjoin: Prism failed the job %d times with a known Prism v2.77 bug (%s, more likely on a busy machine), not a fault of the pipeline or its data; rerunning is safe: %w", Attempts, bug, err)
		}
		if retrying != nil {
			retrying(attempt+1, err)
		}
		retryHooks.Lock()
		hooks := make([]func(), 0, len(retryHooks.fns))
		for _, f := range retryHooks.fns {
			hooks = append(hooks, f)
		}
		retryHooks.Unlock()
		for _, f := range hooks {
			f()
		}
	}
}

// retryHooks are the functions OnRetry registered, by registration number.
var retryHooks = struct {
	sync.Mutex
	next int
	fns  map[int]func()
}{fns: map[int]func(){}}

// OnRetry registers f to be called before Run runs a pipeline again, and
// returns a function that removes it. A retry must start from nothing, as
// a new job does: a test that hands a pipeline's output back through
// memory (a DoFn appending to a variable, which Prism in process allows)
// registers a function that drops what the failed attempt handed back, or
// it would see that attempt's output and the retry's together. Pipelines
// run one at a time in such tests; the hooks run for a retry of any
// pipeline.
func OnRetry(f func()) (remove func()) {
	retryHooks.Lock()
	defer retryHooks.Unlock()
	id := retryHooks.next
	retryHooks.next++
	retryHooks.fns[id] = f
	return func() {
		retryHooks.Lock()
		defer retryHooks.Unlock()
		delete(retryHooks.fns, id)
	}
}

var quiet sync.Once

// QuietInTests turns the log of Prism in process (the default slog logger,
// which Beam sets up at info level) down to warnings when the process is a
// test binary run without -v, so that a failing test shows its failure
// rather than hundreds of lines of Prism's progress. With -v, or outside
// tests, it changes nothing.
func QuietInTests() {
	quiet.Do(func() {
		v := flag.Lookup("test.v")
		if v == nil || v.Value.String() != "false" {
			return
		}
		beamlog.SetupLogging("warn", beamlog.LogKind)
	})
}
