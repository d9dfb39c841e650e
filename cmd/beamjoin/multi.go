package main

// This file holds the multi subcommand: flags, then jsonjoin.RunMulti.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/transforms/join"
)

const multiUsage = `Usage: beamjoin multi --input FILE --input FILE [--input FILE ...] --key FIELD --time FIELD \
    --bounds LO,HI [--bounds LO,HI ...] [--optional I ...] [--emit final] [--out FILE]

Joins three or more inputs on one key in one step (join.Multi): input 1 is
the anchor; each further input has bounds LO,HI (Go durations, inclusive)
on its time less the anchor line's, given in input order, and is required
unless --optional names it (1-based). For each anchor line, one row per
combination of one matching line of each input, null for an optional input
without one; none if a required input has none: the SQL
  a JOIN b ON ... LEFT JOIN c ON ...
Each row is {"key":K,"records":[{...},null,...],"times":[MS,null,...]}.

Example:
  beamjoin multi --input testdata/impressions.jsonl --input testdata/clicks.jsonl \
    --input testdata/conversions.jsonl --key user --time ts \
    --bounds 0,10m --bounds 0,24h --optional 3 --emit final

Flags:
`

// multiCommand runs beamjoin multi.
func multiCommand(args []string) int {
	fs := flag.CommandLine
	fs.Init("beamjoin multi", flag.ContinueOnError)
	var inputs, bounds, optional listFlag
	fs.Var(&inputs, "input", "an input's JSON-lines file or glob; repeat, the anchor first")
	key := fs.String("key", "", "the key's field (a dotted path) in every input")
	tim := fs.String("time", "", "the event time's field in every input (epoch ms or s, or RFC 3339)")
	fs.Var(&bounds, "bounds", "LO,HI: the bounds of an input after the first relative to the anchor; repeat, in input order")
	fs.Var(&optional, "optional", "the number (1-based) of an optional input; repeat")
	var emit join.Emit
	fs.TextVar(&emit, "emit", join.EmitImmediate, "emission mode: immediate, final or retract (files are read whole: the rows are final's)")
	out := fs.String("out", "-", "where rows go, one JSON object per line")
	late := fs.String("late", "", "where late elements go (default: only counted)")
	dead := fs.String("dead-letter", "", "where invalid lines go (default: only counted)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stdout, multiUsage)
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return 0
		}
		return fail(usagef("multi: %v", err))
	}
	if fs.NArg() > 0 {
		return fail(usagef("multi: unexpected argument %q: inputs are given with --input", fs.Arg(0)))
	}
	c := jsonjoin.MultiConfig{Inputs: inputs, Emit: emit, Out: *out, Late: *late, DeadLetter: *dead}
	c.Fields.Key, c.Fields.Time = *key, *tim
	for _, b := range bounds {
		lo, hi, ok := strings.Cut(b, ",")
		l, err1 := time.ParseDuration(strings.TrimSpace(lo))
		h, err2 := time.ParseDuration(strings.TrimSpace(hi))
		if !ok || err1 != nil || err2 != nil {
			return fail(usagef("multi: --bounds %q: want LO,HI, two Go durations (e.g. 0,10m or -5m,5m)", b))
		}
		c.Bounds = append(c.Bounds, jsonjoin.MultiBounds{Lower: l, Upper: h})
	}
	for _, o := range optional {
		i, err := strconv.Atoi(o)
		if err != nil {
			return fail(usagef("multi: --optional %q: want an input's number, 2 or more", o))
		}
		c.Optional = append(c.Optional, i)
	}
	if err := c.Validate(); err != nil {
		return fail(usagef("%s", err))
	}
	preventPrismSplits(*runners.Runner)
	beamlog.LogLevel = "error"
	beam.Init()
	sum, err := jsonjoin.RunMulti(context.Background(), c, *runners.Runner)
	var ce *jsonjoin.ConfigError
	if errors.As(err, &ce) {
		return fail(usagef("%s", ce.Err))
	}
	if err != nil {
		return fail(err)
	}
	fmt.Fprint(os.Stderr, sum)
	return 0
}
