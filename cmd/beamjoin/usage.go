// This file holds the help texts.

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
)

const topUsage = `beamjoin joins streams of JSON lines by key and event time on Apache Beam.

Usage:
  beamjoin interval --left FILE --right FILE --lower DUR --upper DUR [flags]
  beamjoin window   --left FILE --right FILE --size DUR [--slide DUR | --gap DUR] [flags]
  beamjoin cogroup  --left FILE --right FILE --size DUR [--slide DUR | --gap DUR] [flags]
  beamjoin asof     --left FILE --right FILE --key F --time F [--max-age DUR] [--strict] [flags]
  beamjoin multi    --input FILE --input FILE --input FILE ... --key F --time F
                    --bounds LO,HI --bounds LO,HI ... [--optional I ...] [flags]
  beamjoin pubsub-fake [--port N] [--topic projects/P/topics/T]...
  beamjoin publish --topic projects/P/topics/T --time FIELD FILE...
  beamjoin nexmark generate|run ...   (beamjoin nexmark help)
  beamjoin help [interval | window | cogroup | asof | multi | beam]

Subcommands:
  interval  pairs whose times satisfy lower <= ts(right) - ts(left) <= upper
  window    pairs per key and window (fixed, sliding or session windows)
  cogroup   all left and all right objects per key and window
  asof      each left object with the right version of its key valid at its time
  multi     three or more inputs on one key in one step: per anchor object, one
            row per combination of matching objects, within each input's bounds
  pubsub-fake  a Pub/Sub emulator on loopback, for streaming joins on one machine
  publish      send a JSON-lines file to a Pub/Sub topic
  nexmark      Nexmark events, and its join queries Q3, Q8, winning bids on them

Example: the orders with no payment 0 to 15 minutes after them
  beamjoin interval --left testdata/orders.jsonl --right testdata/payments.jsonl \
    --key order_id --time ts --lower 0 --upper 15m --type left --emit final

Inputs are JSON lines, one object per line; a glob may name several files.
An input pubsub:projects/P/subscriptions/S is a Pub/Sub stream (the join
then runs until interrupted, writing to pubsub:projects/P/topics/T
outputs); PUBSUB_EMULATOR_HOST names an emulator such as pubsub-fake.
The key is a JSON string or number at a dotted path (--key user.id); the
event time is epoch milliseconds or an RFC 3339 string (--time ts).

Results go to standard output, one JSON object per line:
  {"kind":"pair","key":K,"left":{...},"right":{...},"left_time":MS,"right_time":MS,"time":MS}
Standard error gets progress every few seconds (--quiet: none), then a
summary counted from the records: lines read, valid and invalid per side,
records written. The exit status is 0 on success; 2 on a usage error,
files that cannot be read or written among them, found before anything
runs; 1 when the pipeline fails or an input has no valid line (the message
says which field was wrong in how many lines).

The pipeline runs on Prism in process unless Beam's --runner says otherwise
(--runner=flink --endpoint=HOST:8099, --runner=dataflow --project=... --region=...
--temp_location=gs://..., --runner=universal --endpoint=HOST:PORT
--environment_type=LOOPBACK). Workers that do not run in this process
cannot write to its standard output: give them --out FILE (e.g. gs://...),
and follow their progress in the runner's own UI. With --runner=dataflow
--dry_run the translated job goes to standard output and nothing runs.
'beamjoin help beam' lists all of Beam's flags. Prism in process holds the
whole run in this process's memory: for files read whole the command runs
Go's garbage collector at GOGC=50 unless the GOGC environment variable is
set (a replay or a Pub/Sub stream keeps Go's default).
`

// examples are each subcommand's usage line and examples.
var examples = map[jsonjoin.Op]string{
	jsonjoin.Interval: `Usage: beamjoin interval --left FILE --right FILE --lower DUR --upper DUR [flags]

Joins a left object l and a right object r with the same key iff
lower <= ts(r) - ts(l) <= upper. Outer types (--type left, right, full) also
write objects that have no partner; --emit says when: immediate (on arrival,
pairs may follow), final (once, when no partner can still come, only if none
came) or retract (immediate, then a retraction when a partner comes).

Examples:
  # Orders (left) and their payments 0 to 15 minutes later; unpaid orders too.
  beamjoin interval --left testdata/orders.jsonl --right testdata/payments.jsonl \
    --key order_id --time ts --lower 0 --upper 15m --type left --emit final

  # Clicks and the impressions of the same ad in the 10 minutes before them.
  beamjoin interval --left testdata/clicks.jsonl --right testdata/impressions.jsonl \
    --key ad.id --time ts --lower -10m --upper 0

  # The same as a stream: each file replayed in line order, the watermark
  # 1 minute behind the largest time read; late payments to late.jsonl.
  beamjoin interval --left testdata/orders.jsonl --right testdata/payments.jsonl \
    --key order_id --time ts --lower 0 --upper 15m --type left --emit final \
    --watermark-lag 1m --late late.jsonl

Output, one object per line (kind is pair, unmatched or retract; an absent
side and its time are null):
  {"kind":"pair","key":K,"left":{...},"right":{...},"left_time":MS,"right_time":MS,"time":MS}
Late elements (--late): {"side":"left","key":K,"time":MS,"value":{...}}
Dead letters (--dead-letter): {"file":"...","line":N,"error":"...","raw":"..."}

With --watermark-lag the reader judges lateness: an object read more than
--allowed-lateness behind the watermark (a left one with --lower above 0,
or a right one with --upper below 0, that much more) is late whatever its
key, is never joined, and goes to --late with "judged_by":"reader"; the
summary counts it as reader_late. Results and late objects are then the
same in every run.
`,
	jsonjoin.Window: `Usage: beamjoin window --left FILE --right FILE --size DUR [--slide DUR | --gap DUR] [flags]

Joins the left and right objects with the same key in the same window:
every pair, and with --type left, right or full the objects whose window has
no partner. Records come when a window closes. With sliding windows a pair
is written once for each window that holds both.

Examples:
  # Orders and payments in the same hour.
  beamjoin window --left testdata/orders.jsonl --right testdata/payments.jsonl \
    --key order_id --time ts --size 1h --type left

  # Clicks and impressions in the same session of a user (30-minute gap).
  beamjoin window --left testdata/clicks.jsonl --right testdata/impressions.jsonl \
    --key user --time ts --gap 30m

  # The same hours as a stream, the watermark 2 minutes behind the largest
  # time read: payments that come after their hour closed go to late.jsonl.
  beamjoin window --left testdata/orders.jsonl --right testdata/payments.jsonl \
    --key order_id --time ts --size 1h --type left --watermark-lag 2m --late late.jsonl

Output: as interval's, plus "window":{"start":MS,"end":MS} (end exclusive);
time is end - 1. A window closes when the watermark passes its end; an
object that comes after that is late: it joins nothing and is written to
--late (one line per window it missed, with that window), unless
--allowed-lateness keeps the window open for it: then it adds records to
the window (its pairs with the window's objects, or itself unmatched).
Late elements (--late): {"side":"right","key":K,"time":MS,"value":{...},"window":{"start":MS,"end":MS}}
With --watermark-lag or a Pub/Sub input, standard error ends with each
side's accounting (files read whole have nothing late: no fates counted):
  left: in N = matched N + unmatched N + expired N + late N
`,
	jsonjoin.CoGroup: `Usage: beamjoin cogroup --left FILE --right FILE --size DUR [--slide DUR | --gap DUR] [flags]

Groups the left and right objects by key and window: one record per key and
window that has any, with each side's objects sorted by file, then line
(grouping keeps no order; for Pub/Sub, by subscription, then message ID).

Example:
  # Each order's payments, per hour.
  beamjoin cogroup --left testdata/orders.jsonl --right testdata/payments.jsonl \
    --key order_id --time ts --size 1h

Output:
  {"kind":"group","key":K,"left":[...],"right":[...],"time":MS,"window":{"start":MS,"end":MS}}
Late objects (--late) and the accounting (left: in N = grouped N + late N)
are as window's; within --allowed-lateness a late object adds a further
group to its window, holding only the objects new since the last one.
`,
}

// runnerFlags are the Beam flags a subcommand's help shows.
var runnerFlags = []string{"runner", "endpoint", "environment_type", "environment_config", "job_name",
	"parallelism", "project", "region", "temp_location", "staging_location"}

func printUsage(w io.Writer, f *cmdFlags) {
	fmt.Fprintln(w, examples[f.op])
	fmt.Fprintln(w, "Flags:")
	printFlags(w, f.mine)
	fmt.Fprintln(w, "\nRunner flags (Beam's own; 'beamjoin help beam' lists them all):")
	printFlags(w, runnerFlags)
}

// printFlags prints the named flags of flag.CommandLine in the style of
// flag.PrintDefaults, but with two dashes.
func printFlags(w io.Writer, names []string) {
	for _, n := range names {
		f := flag.CommandLine.Lookup(n)
		if f == nil {
			continue
		}
		name, usage := flag.UnquoteUsage(f)
		if f.Name == "runner" {
			usage = "Pipeline runner: prism (Prism in process, the default), flink, spark, dataflow or universal."
		}
		head := "  --" + f.Name
		if name != "" {
			head += " " + name
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n    \t%s%s\n", head, strings.ReplaceAll(usage, "\n", "\n    \t"), def)
	}
}

// help is 'beamjoin help [TOPIC]'.
func help(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stdout, topUsage)
		return 0
	}
	switch args[0] {
	case string(jsonjoin.Interval), string(jsonjoin.Window), string(jsonjoin.CoGroup), string(jsonjoin.AsOf), string(jsonjoin.Multi):
		printUsage(os.Stdout, register(flag.CommandLine, jsonjoin.Op(args[0])))
		return 0
	case "beam":
		fmt.Fprintln(os.Stdout, "Beam's flags, registered by the Beam Go SDK's packages; every subcommand takes them:")
		var names []string
		flag.CommandLine.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		printFlags(os.Stdout, names)
		return 0
	}
	return fail(usagef("help %s: no such topic; give interval, window, cogroup, asof, multi or beam", args[0]))
}
