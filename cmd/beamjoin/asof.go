// This file holds the asof subcommand's own parts: its flags' translation
// into a jsonjoin.Config and its help text. Its flags are registered with
// the others (register, flags.go).

package main

import "github.com/beamjoin/beamjoin/pipelines/jsonjoin"

func init() {
	examples[jsonjoin.AsOf] = asofUsage
}

// asof sets the as-of join's settings of c from the flags. --type and
// --emit are set by the flags' own defaults (inner, final); the join
// checks them (jsonjoin.Config.Validate).
func (f *cmdFlags) asof(c *jsonjoin.Config) {
	c.Emit = f.emit
	c.MaxAge, c.LimitAge = f.maxAge.d, f.maxAge.set
	c.Strict = *f.strict
	c.Late = *f.late
}

const asofUsage = `Usage: beamjoin asof --left FILE --right FILE --key F --time F [--type inner|left]
         [--max-age DUR] [--strict] [--emit final|retract] [--watermark-lag DUR] [--late FILE]

Joins each left object (an event at time t) with the right object of the
same key that is the version valid at t: the one with the greatest time at
or before t (--strict: before t; --max-age D: not before t - D). Of two
right objects of one key at one time, the one whose line the join encodes
as the greater bytes wins (of two lines of equal length, the greater in
byte order), whatever the order of the file's lines. With
--type left a left object with no valid version is written unmatched.

--emit final (the default) writes each left object's record once no version
at or before its time can still come; --emit retract writes it at once and,
when a version that arrives later supersedes its match, a retract record
carrying the earlier record before the new pair.

Examples:
  # Orders priced at the currency rate valid at the order's time.
  beamjoin asof --left testdata/pricing/orders.jsonl --right testdata/pricing/rates.jsonl \
    --key currency --time ts --type left

  # The same, only rates at most a day old, replayed as a stream whose
  # watermark trails the largest time read by 1 minute; late lines to late.jsonl.
  beamjoin asof --left testdata/pricing/orders.jsonl --right testdata/pricing/rates.jsonl \
    --key currency --time ts --type left --max-age 24h --watermark-lag 1m --late late.jsonl

Output, as interval's (time is the left object's):
  {"kind":"pair","key":K,"left":{...},"right":{...},"left_time":MS,"right_time":MS,"time":MS}
Late elements (--late): {"side":"right","key":K,"time":MS,"value":{...}}
Dead letters (--dead-letter): {"file":"...","line":N,"error":"...","raw":"..."}

With --watermark-lag the reader judges lateness: an object read behind the
watermark is late whatever its key (a version may belong to a record
already written), is never joined, and goes to --late with
"judged_by":"reader". Results and late objects are then the same in every
run, and the records are those of the files less the late objects.
`
