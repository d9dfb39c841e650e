// This file holds the nexmark subcommand: Nexmark events to files
// (generate), and a Nexmark join query on them (run).

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/beamjoin/beamjoin/pipelines/nexmark"
)

const nexmarkUsage = `Usage:
  beamjoin nexmark generate --events N --seed S [--rate R] --out DIR
  beamjoin nexmark run --query q3|q8|q9 --events N --seed S [--rate R] [--out FILE] [--stream] [--sdk-only]

generate writes the N Nexmark events that seed S makes to DIR/person.jsonl,
DIR/auction.jsonl and DIR/bid.jsonl, each in dateTime order, with dateTime
and expires in epoch milliseconds; --rate is events per second of event
time (default 10000, Beam Java Nexmark's).

run generates the same events in the pipeline and runs a query on them,
writing one JSON object per row to --out (- for standard output; no --out
counts the rows only):
  q3  persons in OR, ID, CA and their auctions in category 10 (join.Interval)
      {"name","city","state","id"}
  q8  persons and their auctions in the same 10 s window (join.Window)
      {"id","name","reserve","window_start"}
  q9  each auction's winning bid (join.Interval)
      {"auction","price","bidder","dateTime"}
--stream reads the events as an unbounded stream with a watermark;
--sdk-only runs the query written with the Beam SDK's transforms alone.
Standard error gets events/s and the summary. docs/nexmark.md has the
rules and the figures.

Flags:
`

// nexmarkFlags are the flags of both nexmark subcommands.
type nexmarkFlags struct {
	events  *int64
	seed    *uint64
	rate    *float64
	out     *string
	query   *string
	stream  *bool
	sdkOnly *bool
}

func registerNexmark(fs *flag.FlagSet, run bool) nexmarkFlags {
	f := nexmarkFlags{
		events: fs.Int64("events", 0, "number of events to generate (required)"),
		seed:   fs.Uint64("seed", 0, "generator seed (required)"),
		rate:   fs.Float64("rate", 10000, "events per second of event time"),
	}
	if run {
		f.out = fs.String("out", "", "file of JSON rows, - for standard output (default: count rows only)")
		f.query = fs.String("query", "", "q3, q8 or q9 (required)")
		f.stream = fs.Bool("stream", false, "read the events as an unbounded stream with a watermark")
		f.sdkOnly = fs.Bool("sdk-only", false, "run the query written with the Beam SDK's transforms only")
	} else {
		f.out = fs.String("out", "", "directory for person.jsonl, auction.jsonl, bid.jsonl (required)")
	}
	return f
}

// nexmarkCommand is `beamjoin nexmark generate|run`.
func nexmarkCommand(args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(os.Stdout, nexmarkUsage)
		return 0
	}
	sub, args := args[0], args[1:]
	if sub != "generate" && sub != "run" {
		return fail(usagef("nexmark: unknown subcommand %q: give generate or run (run 'beamjoin nexmark help')", sub))
	}
	fs := flag.CommandLine
	fs.Init("beamjoin nexmark "+sub, flag.ContinueOnError)
	f := registerNexmark(fs, sub == "run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stdout, nexmarkUsage)
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return 0
		}
		return fail(usagef("nexmark %s: %v", sub, err))
	}
	if fs.NArg() > 0 {
		return fail(usagef("nexmark %s: unexpected argument %q", sub, fs.Arg(0)))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, name := range []string{"events", "seed"} {
		if !set[name] {
			return fail(usagef("nexmark %s: --%s is required", sub, name))
		}
	}
	if *f.events <= 0 {
		return fail(usagef("nexmark %s: --events %d: want a positive number of events", sub, *f.events))
	}
	if !(*f.rate > 0) {
		return fail(usagef("nexmark %s: --rate %v: want a positive number of events per second", sub, *f.rate))
	}
	c := nexmark.Config{Seed: *f.seed, Events: *f.events, Rate: *f.rate}
	if err := c.Check(); err != nil {
		return fail(usagef("nexmark %s: %v", sub, err))
	}
	if sub == "generate" {
		return nexmarkGenerate(c, *f.out)
	}
	q := nexmark.Query(strings.ToLower(*f.query))
	if !slices.Contains(nexmark.Queries, q) {
		return fail(usagef("nexmark run: --query %q: want q3, q8 or q9", *f.query))
	}
	preventPrismSplits(*runners.Runner)
	beamlog.LogLevel = "error"
	beam.Init()
	if err := checkRunner(*runners.Runner); err != nil {
		return fail(err)
	}
	sum, err := nexmark.Run(context.Background(), nexmark.RunConfig{
		Query: q, SDKOnly: *f.sdkOnly, Stream: *f.stream, Out: *f.out, Runner: *runners.Runner, Config: c,
	})
	if err != nil {
		return fail(pipelineError(err, "error"))
	}
	fmt.Fprintf(os.Stderr, "beamjoin: %.0f events/s\n%s\n", sum.EventsPerSecond(), sum)
	return 0
}

func nexmarkGenerate(c nexmark.Config, dir string) int {
	if dir == "" {
		return fail(usagef("nexmark generate: --out DIR is required"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(usagef("nexmark generate: --out %s: %v", dir, err))
	}
	start := time.Now()
	events, err := nexmark.Generate(c)
	if err == nil {
		err = nexmark.WriteJSONL(dir, events)
	}
	if err != nil {
		return fail(err)
	}
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "beamjoin: %d events (seed %d, %v events/s of event time) to %s in %.2fs: %.0f events/s\n",
		c.Events, c.Seed, c.Rate, dir, el.Seconds(), float64(c.Events)/el.Seconds())
	return 0
}
