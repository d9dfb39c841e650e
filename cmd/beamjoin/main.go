// Command beamjoin joins streams of JSON lines by key and event time on
// Apache Beam: an interval join, a window join, a cogroup, an as-of join
// of two inputs, or a multi-way interval join of three or more. It runs
// on Prism in process by default, and on any runner the Beam Go SDK has
// (--runner=flink, --runner=dataflow, --runner=universal, …).
//
//	beamjoin interval --left FILE --right FILE --lower DUR --upper DUR [flags]
//	beamjoin window   --left FILE --right FILE --size DUR [--slide DUR | --gap DUR] [flags]
//	beamjoin cogroup  --left FILE --right FILE --size DUR [--slide DUR | --gap DUR] [flags]
//	beamjoin asof     --left FILE --right FILE --key F --time F [--max-age DUR] [--strict] [flags]
//	beamjoin multi    --input FILE --input FILE --input FILE ... --key F --time F --bounds LO,HI ... [--optional I ...] [flags]
//
// For example, the orders with no payment 0 to 15 minutes after them:
//
//	beamjoin interval --left testdata/orders.jsonl --right testdata/payments.jsonl \
//		--key order_id --time ts --lower 0 --upper 15m --type left --emit final
//
// Results go to standard output (or --out), one JSON object per line;
// late elements to --late, bad lines to --dead-letter; progress (unless
// --quiet) and a summary counted from the records to standard error. The
// exit status is 0 on success, 2 on a usage error (a flag, or a file that
// cannot be read or written, found before anything runs) and 1 when the
// pipeline fails or an input has no valid line. The formats and the flags
// are in the package documentation of pipelines/jsonjoin and in `beamjoin
// help`.
//
// The command is also its own Beam worker: started with --worker=true and no
// subcommand (as Flink, Dataflow and Prism's PROCESS environment do), it
// serves as an SDK harness and never returns.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run is the command; it returns the exit status. It uses flag.CommandLine,
// where Beam's packages register their flags, for the subcommand's flags
// too, so that one parse sees both.
func run(args []string) int {
	fs := flag.CommandLine
	fs.Init("beamjoin", flag.ContinueOnError)
	fs.SetOutput(io.Discard)

	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// No subcommand: a worker (--worker=true …), or a user asking for
		// help or forgetting the subcommand.
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stdout, topUsage)
			return 0
		}
		if err != nil {
			return fail(usagef("%v (run 'beamjoin help')", err))
		}
		beam.Init() // in worker mode, runs the worker and never returns
		return fail(usagef("no subcommand: give interval, window, cogroup, asof or multi (run 'beamjoin help')"))
	}

	name, args := args[0], args[1:]
	switch name {
	case "help":
		return help(args)
	case "pubsub-fake":
		return pubsubFake(args)
	case "publish":
		return publish(args)
	case "nexmark":
		return nexmarkCommand(args)
	case string(jsonjoin.Interval), string(jsonjoin.Window), string(jsonjoin.CoGroup), string(jsonjoin.AsOf), string(jsonjoin.Multi):
	default:
		return fail(usagef("unknown subcommand %q: give interval, window, cogroup, asof or multi (run 'beamjoin help')", name))
	}
	op := jsonjoin.Op(name)
	fs.Init("beamjoin "+name, flag.ContinueOnError)
	f := register(fs, op)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(os.Stdout, f)
			return 0
		}
		return fail(parseError(name, err))
	}
	if fs.NArg() > 0 {
		given := "--left and --right"
		if op == jsonjoin.Multi {
			given = "--input"
		}
		return fail(usagef("%s: unexpected argument %q: inputs are given with %s", name, fs.Arg(0), given))
	}
	if err := checkLogLevel(*f.logLevel); err != nil {
		return fail(err)
	}
	beamlog.LogLevel = *f.logLevel
	preventPrismSplits(*runners.Runner)
	beam.Init()
	if *f.logLevel != "debug" {
		slog.SetDefault(slog.New(firstLines{slog.Default().Handler()}))
	}

	c, err := f.config()
	if err != nil {
		return fail(err)
	}
	if collectsSooner(c) {
		prismrun.SetGCPercent()
	}
	// Validate before anything runs or is said about the run; Run checks
	// again, and adds the files.
	if err := c.Validate(); err != nil {
		return fail(f.configError(err))
	}
	if err := checkRunner(*runners.Runner); err != nil {
		return fail(err)
	}
	workers := jsonjoin.WorkersOf(*runners.Runner)
	if !*f.quiet {
		c.Progress, c.ProgressEvery = progressPrinter(os.Stderr, f.progress.d), f.progress.d
	}
	if workers == jsonjoin.Remote && c.Accounting == "" {
		c.Accounting = remoteAccounting()
	}
	var dry *dryRunLog
	if dryRun() {
		dry = captureDryRun()
	}
	waits := waitsForDataflow(*runners.Runner, c.Streaming(), *jobopts.Async)
	if err := checkOnInterrupt(f, waits); err != nil {
		return fail(err)
	}
	if waits {
		*jobopts.Async = true // the command waits for the job itself: remote.go
	}
	ctx, stop := context.Background(), context.CancelFunc(func() {})
	if c.Streaming() {
		// A stream has no end: the join runs until it is interrupted.
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		fmt.Fprintln(os.Stderr, "beamjoin: joining Pub/Sub streams until interrupted (Ctrl-C)")
		go func() {
			// The runner logs the bundles that the interrupt cancels as
			// errors: they are the way a stream stops, not faults.
			<-ctx.Done()
			slog.SetDefault(slog.New(slog.DiscardHandler))
		}()
	}
	// Before the run: Prism in process leaves its own address in --endpoint.
	inProcess := jobInProcess(*runners.Runner)
	sum, err := jsonjoin.Run(ctx, c, *runners.Runner)
	if waits && err == nil && sum.JobID != "" {
		stop() // from here the wait takes the signals: the context would take only the first
		return waitForDataflow(sum.JobID, f.onInterrupt)
	}
	if errors.Is(err, jsonjoin.ErrStopped) {
		fmt.Fprint(os.Stderr, stopped(sum, inProcess))
		return 0
	}
	var ce *jsonjoin.ConfigError
	if errors.As(err, &ce) {
		return fail(f.configError(ce))
	}
	if err != nil {
		return fail(pipelineError(err, *f.logLevel))
	}
	if !sum.Ran {
		dry.report(os.Stdout, os.Stderr, *runners.Runner)
		return 0
	}
	if workers == jsonjoin.Remote {
		removeFile(c.Accounting)
	}
	fmt.Fprint(os.Stderr, sum)
	if err := sum.Check(); err != nil {
		return fail(err)
	}
	hint(sum, c)
	return 0
}

// checkOnInterrupt refuses --on-interrupt where the command does not wait
// for a job in a runner outside this process: elsewhere Ctrl-C stops the
// job in this process, or only the command.
func checkOnInterrupt(f *cmdFlags, waits bool) error {
	given := false
	flag.CommandLine.Visit(func(fl *flag.Flag) { given = given || fl.Name == "on-interrupt" })
	if given && !waits {
		return usagef("--on-interrupt %s: only a Pub/Sub join on Dataflow (--runner=dataflow, without --async) waits for its job; on Prism in process Ctrl-C stops the job, and on other runners it stops only the command", f.onInterrupt)
	}
	return nil
}

// waitForDataflow waits for the Dataflow job id, and on an interrupt
// does what action says (remote.go). Signals now come to it, not to the
// context of the run, which would take only the first.
func waitForDataflow(id string, action interruptAction) int {
	interrupts := make(chan os.Signal, 2)
	signal.Notify(interrupts, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(interrupts)
	ctx := context.Background()
	job, err := newDataflowJob(ctx, id)
	if err != nil {
		return fail(err)
	}
	if err := waitForJob(ctx, job, interrupts, action, pollJob, os.Stderr); err != nil {
		return 1
	}
	return 0
}

// hint points at the flag that writes what was only counted.
func hint(sum jsonjoin.Summary, c jsonjoin.Config) {
	var bad, late int64
	for name, n := range sum.Counts {
		switch {
		case strings.HasSuffix(name, "_invalid"):
			bad += n
		case strings.HasSuffix(name, "_late_out"):
			late += n
		}
	}
	if bad > 0 && c.DeadLetter == "" {
		fmt.Fprintf(os.Stderr, "beamjoin: invalid lines not written: %d (%s); --dead-letter FILE writes them with the reason\n", bad, sum.InvalidReasons())
	}
	if late > 0 && c.Late == "" {
		fmt.Fprintf(os.Stderr, "beamjoin: late elements not written: %d; --late FILE writes them\n", late)
	}
}

// pipelineError is the one line for a pipeline failure: its root cause,
// unless --log-level debug asks for all of it.
func pipelineError(err error, level string) error {
	if level == "debug" || !strings.Contains(err.Error(), "\n") {
		return err
	}
	return fmt.Errorf("beamjoin: pipeline failed: %s (--log-level debug shows the whole error)", rootCause(err))
}

// fail prints err on one line and returns the exit status for it: 2 for a
// usage error, 1 otherwise.
func fail(err error) int {
	fmt.Fprintln(os.Stderr, err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func checkLogLevel(l string) error {
	switch l {
	case "debug", "info", "warn", "error":
		return nil
	}
	return usagef("--log-level %s: want debug, info, warn or error", l)
}

// knownRunners are the names under which the Beam Go SDK registers its
// runners; beam.Run exits the process on any other.
var knownRunners = []string{"prism", "PrismRunner", "universal", "portable", "PortableRunner",
	"flink", "FlinkRunner", "spark", "SparkRunner", "dataflow", "DataflowRunner", "dot", "vet"}

func checkRunner(r string) error {
	switch r {
	case "":
		return nil
	case "direct", "DirectRunner":
		return usagef("--runner %s: the Go SDK's direct runner has no state or timers; use prism (the default), which runs in process", r)
	}
	for _, k := range knownRunners {
		if r == k {
			return nil
		}
	}
	return usagef("--runner %s: unknown runner; want prism (the default), flink, spark, dataflow or universal", r)
}

// preventPrismSplits turns off Prism's dynamic splitting of bundles
// (experiment prism_disable_sdf_split) for a run on Prism, or on a job
// server that may be a stand-alone Prism (other job servers ignore the
// experiment), unless --experiments names it already. When a bundle of the
// interval join's stateful DoFn is slow, Prism splits it, and a split of a
// bundle that holds timers loses or repeats work (apache/beam#35771):
// measured here as duplicated pairs and missing fates under
// --watermark-lag. The command owns Beam's flags, so it sets the default
// here, before beam.Init; the pipelines it calls change no flag.
func preventPrismSplits(runner string) {
	switch runner {
	case "", "prism", "PrismRunner", "universal", "portable", "PortableRunner":
	default:
		return
	}
	const exp = "prism_disable_sdf_split"
	if !slices.Contains(jobopts.GetExperiments(), exp) {
		*jobopts.Experiments = strings.Join(append(jobopts.GetExperiments(), exp), ",")
	}
}

// stopped is what the command says when a streaming join was interrupted:
// what it had done, when its workers ran here, and what becomes of the
// job, which ends with the command only when it ran in this process.
func stopped(sum jsonjoin.Summary, inProcess bool) string {
	var b strings.Builder
	if sum.Stream != nil {
		b.WriteString(sum.Stream.Stopped() + "\n")
	} else {
		b.WriteString("beamjoin: stopped; the runner's own UI shows what the job read and wrote\n")
	}
	if inProcess {
		b.WriteString("beamjoin: messages not yet acknowledged are delivered to the next run\n")
	} else {
		b.WriteString("beamjoin: only the command stopped: the job runs on in the runner until it is cancelled or drained there (Dataflow: gcloud dataflow jobs drain JOB_ID --region=REGION)\n")
	}
	return b.String()
}

// jobInProcess reports whether the runner runs the job in this process
// (Prism with no --endpoint), so that it ends when the command does.
func jobInProcess(runner string) bool {
	switch runner {
	case "", "prism", "PrismRunner":
		return *jobopts.Endpoint == ""
	}
	return false
}

// collectsSooner says whether the command runs Go's garbage collector at
// prismrun.GCPercent (unless GOGC is set) for the join c: a join of files
// read whole, which Prism in process holds in this heap all at once. A
// replay (--watermark-lag) or a Pub/Sub stream keeps Go's default, which
// costs it less time (see prismrun.GCPercent).
func collectsSooner(c jsonjoin.Config) bool { return !c.Replay && !c.Streaming() }
