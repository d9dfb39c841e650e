// This file holds the subcommands' flags and their translation into a
// jsonjoin.Config, with the usage errors for flags that are missing (a
// Config cannot tell a flag left out from one given as zero). What the
// values may be is the Config's to check (jsonjoin.Config.Validate):
// configError only says which flags gave the value it rejects.

package main

import (
	"encoding"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// durationFlag is a time.Duration flag that remembers its text, so that a
// usage error can quote what the user typed.
type durationFlag struct {
	d    time.Duration
	text string
	set  bool
}

func (f *durationFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.text
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a Go duration (e.g. 15m, -5m, 1500ms, 0)")
	}
	f.d, f.text, f.set = d, s, true
	return nil
}

// cmdFlags are one subcommand's flags, registered on flag.CommandLine beside
// Beam's own.
type cmdFlags struct {
	op   jsonjoin.Op
	mine []string // names of the flags below, in order, for the usage text

	left, right              *string
	key, leftKey, rightKey   *string
	tim, leftTime, rightTime *string
	out, deadLetter          *string
	watermarkLag             durationFlag
	idleAfter                durationFlag
	maxSkew                  durationFlag
	logLevel                 *string
	quiet                    *bool
	progress                 durationFlag
	onInterrupt              interruptAction

	// interval
	lower, upper, allowedLateness  durationFlag
	lowerExclusive, upperExclusive *bool
	uniqueLeft                     *bool
	typ                            join.Type // and window
	emit                           join.Emit
	maxBuffered                    *int
	late                           *string

	// window, cogroup
	size, slide, gap durationFlag

	// asof (asof.go)
	maxAge durationFlag
	strict *bool

	// multi (multi.go), which has no left or right flags
	inputs, bounds, optional listFlag
}

// register defines op's flags on fs.
func register(fs *flag.FlagSet, op jsonjoin.Op) *cmdFlags {
	f := &cmdFlags{op: op}
	str := func(p **string, name, value, usage string) {
		*p = fs.String(name, value, usage)
		f.mine = append(f.mine, name)
	}
	dur := func(p *durationFlag, name, usage string) {
		fs.Var(p, name, usage)
		f.mine = append(f.mine, name)
	}
	boolean := func(p **bool, name, usage string) {
		*p = fs.Bool(name, false, usage)
		f.mine = append(f.mine, name)
	}
	text := func(p encoding.TextUnmarshaler, name string, value encoding.TextMarshaler, usage string) {
		fs.TextVar(p, name, value, usage)
		f.mine = append(f.mine, name)
	}
	list := func(p *listFlag, name, usage string) {
		fs.Var(p, name, usage)
		f.mine = append(f.mine, name)
	}
	if op == jsonjoin.Multi {
		list(&f.inputs, "input", "an input: a JSON-lines `FILE` or glob, or pubsub:projects/P/subscriptions/S; three or more, the anchor first (required)")
		str(&f.key, "key", "", "key `FIELD` of every input, a dotted path such as user.id; a key is a JSON string or number")
		str(&f.tim, "time", "", "event-time `FIELD` of every input: epoch milliseconds or an RFC 3339 string; attribute:NAME for a Pub/Sub message's attribute")
	} else {
		str(&f.left, "left", "", "left input: a JSON-lines `FILE` or glob, or pubsub:projects/P/subscriptions/S (required)")
		str(&f.right, "right", "", "right input: a JSON-lines `FILE` or glob, or pubsub:projects/P/subscriptions/S (required)")
		str(&f.key, "key", "", "key `FIELD` of both sides, a dotted path such as user.id; a key is a JSON string or number")
		str(&f.leftKey, "left-key", "", "key `FIELD` of the left side (overrides --key)")
		str(&f.rightKey, "right-key", "", "key `FIELD` of the right side (overrides --key)")
		str(&f.tim, "time", "", "event-time `FIELD` of both sides: epoch milliseconds or an RFC 3339 string; attribute:NAME for a Pub/Sub message's attribute")
		str(&f.leftTime, "left-time", "", "event-time `FIELD` of the left side (overrides --time)")
		str(&f.rightTime, "right-time", "", "event-time `FIELD` of the right side (overrides --time)")
	}
	switch op {
	case jsonjoin.Interval:
		dur(&f.lower, "lower", "lower bound of ts(right) - ts(left), a Go duration `DUR` such as -5m or 0 (required)")
		dur(&f.upper, "upper", "upper bound of ts(right) - ts(left), a Go duration `DUR` such as 15m (required)")
		boolean(&f.lowerExclusive, "lower-exclusive", "exclude the lower bound: ts(right) - ts(left) > lower")
		boolean(&f.upperExclusive, "upper-exclusive", "exclude the upper bound: ts(right) - ts(left) < upper")
		text(&f.typ, "type", join.Inner, "join `TYPE`: inner, left, right or full")
		text(&f.emit, "emit", join.EmitImmediate, "`MODE` of writing an outer element without a partner: immediate, final or retract")
		dur(&f.allowedLateness, "allowed-lateness", "keep elements `DUR` longer than the bounds need, so that later arrivals still join (default 0)")
		f.maxBuffered = fs.Int("max-buffered-per-key", 0, "cap of `N` elements a key buffers on both sides together; the oldest are evicted (default 0: no cap)")
		f.mine = append(f.mine, "max-buffered-per-key")
		boolean(&f.uniqueLeft, "unique-left", "the left side has at most one line per key (its key is its id): when streaming, right lines that arrive while their key's left line is held are not held, and a second left line arriving then is written as late")
	case jsonjoin.AsOf:
		text(&f.typ, "type", join.Inner, "join `TYPE`: inner, or left (an order with no valid version is written unmatched)")
		text(&f.emit, "emit", join.EmitFinal, "`MODE` of writing a left object's record: final (once no version at or before its time can still come) or retract (at once, retracted when a later-arriving version supersedes it)")
		dur(&f.maxAge, "max-age", "accept only versions at most `DUR` older than the left object (inclusive; default: any age)")
		boolean(&f.strict, "strict", "accept only versions strictly before the left object's time")
	case jsonjoin.Multi:
		list(&f.bounds, "bounds", "`LO,HI`: the bounds of ts - ts(anchor) of an input after the first, Go durations, inclusive (e.g. 0,10m or -5m,5m); one for each, in input order (required)")
		list(&f.optional, "optional", "the number `I` (1-based) of an input a row may lack, null then; repeat for several (default: every input is required)")
		text(&f.emit, "emit", join.EmitImmediate, "`MODE` of writing rows: immediate, final or retract (files read whole give final's rows in every mode)")
	case jsonjoin.Window:
		text(&f.typ, "type", join.Inner, "join `TYPE`: inner, left, right or full")
		fallthrough
	case jsonjoin.CoGroup:
		dur(&f.size, "size", "window size `DUR`: fixed windows, or sliding ones with --slide")
		dur(&f.slide, "slide", "window period `DUR`: sliding windows of --size starting every --slide")
		dur(&f.gap, "gap", "session windows with this `DUR` gap, instead of --size")
		dur(&f.allowedLateness, "allowed-lateness", "keep each window `DUR` after it closed: a later arrival adds a late pane to it (default 0)")
	}
	str(&f.out, "out", "-", "results `FILE`, one JSON object per line; - is standard output; pubsub:projects/P/topics/T a topic")
	str(&f.late, "late", "", "late-elements `FILE` (default: counted only)")
	str(&f.deadLetter, "dead-letter", "", "`FILE` for lines that are not records: bad JSON, missing key or time, over 1 MiB (default: counted only)")
	dur(&f.watermarkLag, "watermark-lag", "replay each file in line order as a stream whose watermark trails the largest time read by `DUR` (default: read files whole, in batch)")
	dur(&f.idleAfter, "idle-after", "Pub/Sub inputs: after `DUR` without a message, a subscription's watermark moves on by itself, as fast as the clock from the latest time read, so that a quiet stream's timers fire; a message that comes after such a pause with an earlier time may then be late (default 10s)")
	dur(&f.maxSkew, "max-skew", "replays and Pub/Sub inputs: a record whose time is more than `DUR` ahead of the latest time read does not move the watermark unless five come in a row, and a message whose time is more than DUR after its publish time is a dead letter, so that one bad time does not make every record after it late (default: no bound)")
	f.progress = durationFlag{d: jsonjoin.DefaultProgressEvery, text: jsonjoin.DefaultProgressEvery.String(), set: true}
	dur(&f.progress, "progress", "report progress on standard error after `DUR`, then every DUR or every tenth of the time elapsed, whichever is longer; only workers in this process (Prism's default) report it")
	f.onInterrupt = detachJob
	fs.Var(&f.onInterrupt, "on-interrupt", "Pub/Sub joins on Dataflow: what Ctrl-C does with the job, `ACTION` detach (stop only the command, saying how to stop the job), cancel or drain (ask Dataflow to, and wait until the job has stopped; Ctrl-C again stops waiting)")
	f.mine = append(f.mine, "on-interrupt")
	boolean(&f.quiet, "quiet", "no progress reports on standard error")
	str(&f.logLevel, "log-level", "warn", "runner log `LEVEL`: debug, info, warn or error")
	return f
}

// usageError is a bad flag: the command exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: "beamjoin: " + fmt.Sprintf(format, args...)}
}

// config checks that the flags a join needs are there and builds its
// Config.
func (f *cmdFlags) config() (jsonjoin.Config, error) {
	c := jsonjoin.Config{Op: f.op, Type: f.typ, Out: *f.out, DeadLetter: *f.deadLetter}
	if f.op != jsonjoin.Multi {
		c.Left = jsonjoin.Input{Pattern: *f.left, Fields: jsonl.Fields{Key: pick(*f.leftKey, *f.key), Time: pick(*f.leftTime, *f.tim)}}
		c.Right = jsonjoin.Input{Pattern: *f.right, Fields: jsonl.Fields{Key: pick(*f.rightKey, *f.key), Time: pick(*f.rightTime, *f.tim)}}
	}
	if f.progress.d <= 0 {
		return c, usagef("--progress %s: give a positive duration (e.g. --progress 30s), or --quiet for no progress", f.progress.text)
	}
	if f.watermarkLag.set {
		c.Replay, c.WatermarkLag = true, f.watermarkLag.d
	}
	if f.idleAfter.set {
		if f.idleAfter.d == 0 {
			// In a Config, zero is the default idle time.
			return c, usagef("--idle-after %s is not positive", f.idleAfter.text)
		}
		c.IdleAfter = f.idleAfter.d
	}
	if f.maxSkew.set {
		if f.maxSkew.d <= 0 {
			return c, usagef("--max-skew %s is not positive", f.maxSkew.text)
		}
		c.MaxSkew = f.maxSkew.d
	}
	switch f.op {
	case jsonjoin.Interval:
		return c, f.interval(&c)
	case jsonjoin.AsOf:
		f.asof(&c)
		return c, nil
	case jsonjoin.Multi:
		return c, f.multi(&c)
	default:
		return c, f.windows(&c)
	}
}

func pick(side, both string) string {
	if side != "" {
		return side
	}
	return both
}

func (f *cmdFlags) interval(c *jsonjoin.Config) error {
	if !f.lower.set || !f.upper.set {
		return usagef("--lower and --upper are required: a right element joins a left one iff lower <= ts(right) - ts(left) <= upper (e.g. --lower 0 --upper 15m)")
	}
	c.Lower, c.Upper = f.lower.d, f.upper.d
	c.LowerExclusive, c.UpperExclusive = *f.lowerExclusive, *f.upperExclusive
	c.Emit = f.emit
	c.AllowedLateness = f.allowedLateness.d
	c.MaxBufferedPerKey = *f.maxBuffered
	c.UniqueLeft = *f.uniqueLeft
	c.Late = *f.late
	return nil
}

func (f *cmdFlags) windows(c *jsonjoin.Config) error {
	switch {
	case !f.gap.set && !f.size.set:
		return usagef("--size is required: fixed windows of --size (sliding with --slide), or session windows with --gap instead (e.g. --size 1h)")
	case f.gap.set && f.gap.d == 0, f.slide.set && f.slide.d == 0:
		// In a Config, zero means "not given": say it here, or the join
		// would judge other windows than the ones asked for.
		name, d := "gap", f.gap
		if !f.gap.set {
			name, d = "slide", f.slide
		}
		return usagef("--%s %s: a window %s must be positive", name, d.text, name)
	}
	c.Size, c.Slide, c.Gap = f.size.d, f.slide.d, f.gap.d
	c.AllowedLateness = f.allowedLateness.d
	c.Late = *f.late
	return nil
}

// trimPrefix drops the "beamjoin: " of an error from a lower layer, which
// the usage error adds back.
func trimPrefix(err error) string { return strings.TrimPrefix(err.Error(), "beamjoin: ") }

// invalidValue is how package flag reports a value that its flag's Set
// rejected.
var invalidValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]+): (.*)$`)

// parseError is a usage error for an error of flag.FlagSet.Parse in
// subcommand cmd, naming the flag with two dashes as the help does.
func parseError(cmd string, err error) error {
	msg := err.Error()
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		return usagef("--%s %s: %s", m[2], m[1], strings.TrimPrefix(m[3], "beamjoin: "))
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return usagef("%s: unknown flag --%s (run 'beamjoin %s --help')", cmd, name, cmd)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return usagef("%s: --%s needs a value (run 'beamjoin %s --help')", cmd, name, cmd)
	}
	return usagef("%s: %s (run 'beamjoin %s --help')", cmd, msg, cmd)
}

// configError turns an error of jsonjoin.Run or Config.Validate into a
// usage error naming the flags that gave the value at fault, as the user
// typed them, with what the flags mean. The checks themselves are the
// Config's and the join's: this only says which flags.
func (f *cmdFlags) configError(err error) error {
	var fe *jsonjoin.FieldError
	if errors.As(err, &fe) {
		return f.fieldError(fe)
	}
	var pe *jsonjoin.PathError
	if errors.As(err, &pe) {
		flags := map[string]string{"Left": "left", "Right": "right", "Out": "out", "Late": "late", "DeadLetter": "dead-letter"}
		flag, ok := flags[pe.Field]
		if !ok && strings.HasPrefix(pe.Field, "Inputs[") {
			flag = "input"
		}
		return usagef("--%s %s: %v", flag, pe.Path, pe.Err)
	}
	var oe *join.OptionError
	if !errors.As(err, &oe) {
		return &usageError{msg: err.Error()}
	}
	var given []string
	show := func(name string, d durationFlag) {
		if d.set {
			given = append(given, "--"+name+" "+d.text)
		}
	}
	var want string
	switch oe.Option {
	case "Between":
		show("lower", f.lower)
		show("upper", f.upper)
		if *f.lowerExclusive {
			given = append(given, "--lower-exclusive")
		}
		if *f.upperExclusive {
			given = append(given, "--upper-exclusive")
		}
		want = "a right element joins a left one iff lower <= ts(right) - ts(left) <= upper; e.g. --lower 0 --upper 15m"
	case "MaxAge":
		show("max-age", f.maxAge)
		want = "a version joins a left object at t only if t - max age <= its time; e.g. --max-age 24h"
	case "AllowedLateness":
		show("allowed-lateness", f.allowedLateness)
		want = "e.g. --allowed-lateness 1m"
	case "WindowInto":
		show("size", f.size)
		show("slide", f.slide)
		show("gap", f.gap)
		want = "e.g. --size 1h, or --size 1h --slide 10m"
		if f.gap.set {
			want = "e.g. --gap 30m"
		}
	default:
		return &usageError{msg: err.Error()}
	}
	return usagef("%s: %s (%s)", strings.Join(given, " "), oe.Reason(), want)
}

// fieldError is the usage error for a Config field that Validate
// rejected, naming the flag that set it.
func (f *cmdFlags) fieldError(fe *jsonjoin.FieldError) error {
	if f.op == jsonjoin.Multi {
		if err := f.multiFieldError(fe); err != nil {
			return err
		}
	}
	side, sub, _ := strings.Cut(fe.Field, ".")
	switch fe.Field {
	case "Left.Pattern", "Right.Pattern":
		value := *f.left
		if side == "Right" {
			value = *f.right
		}
		if value == "" {
			return usagef("--left and --right are required: the two JSON-lines inputs (e.g. --left orders.jsonl --right 'payments-*.jsonl')")
		}
		return usagef("--%s %s: %s", strings.ToLower(side), value, fe.Reason)
	case "Left.Fields.Key", "Right.Fields.Key", "Left.Fields.Time", "Right.Fields.Time":
		s := strings.ToLower(side)
		what, both, one := "key", *f.key, *f.leftKey
		switch {
		case sub == "Fields.Time" && s == "left":
			what, both, one = "time", *f.tim, *f.leftTime
		case sub == "Fields.Time":
			what, both, one = "time", *f.tim, *f.rightTime
		case s == "right":
			one = *f.rightKey
		}
		if one == "" && both == "" {
			return usagef("no %s field for the %s side: give --%s FIELD (both sides) or --%s-%s FIELD", what, s, what, s, what)
		}
		name, value := what, both
		if one != "" {
			name, value = s+"-"+what, one
		}
		return usagef("--%s %s: %s", name, value, fe.Reason)
	case "WatermarkLag":
		return usagef("--watermark-lag %s: %s", f.watermarkLag.text, fe.Reason)
	case "IdleAfter":
		return usagef("--idle-after %s: %s", f.idleAfter.text, fe.Reason)
	case "MaxSkew":
		return usagef("--max-skew %s: %s", f.maxSkew.text, fe.Reason)
	case "Gap":
		return usagef("--gap %s gives session windows, which take no --size or --slide: give either --gap or --size [--slide]", f.gap.text)
	case "Out", "Late", "DeadLetter":
		flags := map[string]string{"Out": "out", "Late": "late", "DeadLetter": "dead-letter"}
		value := map[string]string{"Out": *f.out, "Late": *f.late, "DeadLetter": *f.deadLetter}[fe.Field]
		return usagef("--%s %s: %s", flags[fe.Field], value, fe.Reason)
	}
	return &usageError{msg: fe.Error()}
}
