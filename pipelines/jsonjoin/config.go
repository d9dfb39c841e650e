package jsonjoin

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Op is which operation joins the two inputs.
type Op string

// The operations, named as the beamjoin command's subcommands.
const (
	// Interval is join.Interval: a left-anchored, time-bounded join.
	Interval Op = "interval"
	// Window is join.Window: pairs per key and window.
	Window Op = "window"
	// CoGroup is join.CoGroup: all values of both inputs per key and window.
	CoGroup Op = "cogroup"
	// AsOf is join.AsOf: each left line joined with the right line of its
	// key that is the version valid at its time (asof.go).
	AsOf Op = "asof"
)

// Input is one side of a join: JSON-lines files (a name or a glob) and
// where in each line the key and the event time are (dotted paths).
type Input struct {
	Pattern string
	Fields  jsonl.Fields
}

// Config is a whole join of two JSON-lines inputs: what to read, how to
// join, and where the results go. The zero values of the optional fields
// are the beamjoin command's defaults.
type Config struct {
	Op          Op
	Left, Right Input

	// Interval only: the bounds of ts(right) - ts(left), inclusive unless
	// marked exclusive; the emission mode; the cap on elements buffered per
	// key (zero: none). All three joins: the allowed lateness.
	Lower, Upper                   time.Duration
	LowerExclusive, UpperExclusive bool
	Emit                           join.Emit
	AllowedLateness                time.Duration
	MaxBufferedPerKey              int
	// Interval only: the left side has at most one line per key (its key
	// is its id), join.UniqueLeft: on the streaming path, right lines that
	// arrive while their key's left line is held are not held; a second
	// left line of a key goes to the late output.
	UniqueLeft bool

	// Interval, Window and AsOf: the join type (the zero value is
	// join.Inner). Interval and AsOf: the emission mode; for AsOf,
	// EmitFinal or EmitRetract, and the zero value, EmitImmediate, is
	// EmitFinal.
	Type join.Type

	// AsOf only: with LimitAge, a version more than MaxAge older than the
	// left line is not valid (join.MaxAge); with Strict, a version at the
	// left line's own time is not either (join.Strict).
	MaxAge   time.Duration
	LimitAge bool
	Strict   bool

	// Window and CoGroup: fixed windows of Size, sliding by Slide when it
	// is set, or, with Gap instead of Size, session windows.
	Size, Slide, Gap time.Duration

	// Replay, when true, replays both inputs as one stream, each file in
	// line order, the files merged by event time, with one watermark that
	// trails the largest time read by WatermarkLag (see jsonl.ReadAll and
	// the Replay section of the package doc); otherwise files are read
	// whole, in batch. A replayed interval join's reader judges lateness
	// itself: a line more than join.LateBehind behind the watermark goes
	// to Late, marked as judged by the reader (see the package doc).
	Replay       bool
	WatermarkLag time.Duration

	// IdleAfter, for Pub/Sub inputs only, is how long a subscription must
	// go without a message before its watermark moves on by itself, as
	// fast as the clock from the largest time read (pubsubio.IdleAfter):
	// so that a quiet stream's timers fire, unmatched records of
	// EmitFinal come out and windows close. Zero is
	// pubsubio.DefaultIdleAfter. The watermark of a subscription also
	// trails the largest time read by WatermarkLag.
	IdleAfter time.Duration

	// MaxSkew, for a replay or a Pub/Sub input, bounds how far ahead of
	// the stream a record's event time is taken to be: a record more than
	// MaxSkew ahead of the latest time read does not move the watermark
	// unless five come in a row (jsonl.Source.MaxSkew,
	// pubsubio.MaxSkew), and a message whose event time is more than
	// MaxSkew after its publish time is a dead letter. Zero bounds
	// nothing.
	MaxSkew time.Duration

	// Out is where the results go, one JSON object per line; "" or "-" is
	// standard output. Late and DeadLetter are where late elements and bad
	// lines go; "" means they are only counted.
	Out, Late, DeadLetter string

	// MaxLineBytes is the longest input line; zero is
	// jsonl.DefaultMaxLineBytes.
	MaxLineBytes int

	// Accounting is where Build writes the run's accounting, the counts
	// of a Summary made from the records (lines read, dead letters by
	// reason, records written), as JSON lines that ReadSummary reads; ""
	// writes none. Run picks a temporary file when it is empty and the
	// workers share this machine's files; for remote workers, give a path
	// both they and this process can reach (gs://…).
	Accounting string

	// Progress, when set, is called by Run with the run's progress every
	// ProgressEvery (DefaultProgressEvery when zero) while the job runs,
	// and once more, Done, when it has finished. Only workers in this
	// process (see WorkersOf) report progress.
	Progress      func(Progress)
	ProgressEvery time.Duration

	// hub is the id of the progress hub that Build's DoFns feed; Run sets
	// it.
	hub string

	// streamingBatch makes a join of files read whole use the path of a
	// stream (the interval join's stateful one rather than join.Bounded,
	// the window join's and cogroup's late-counting one rather than
	// CoGroupByKey): benchmarks compare the two (export_test.go).
	streamingBatch bool
}

// FieldError is a Config that cannot be built, found by Validate: Field
// names the Config field at fault as a Go selector ("Op", "Left.Pattern",
// "Left.Fields.Key", "WatermarkLag", "IdleAfter", "MaxSkew", "Size", "Gap", "Out",
// …), and Reason says what is wrong with its value, so that a command can
// name its own flag. An option that the join itself rejects is a
// *join.OptionError instead.
type FieldError struct {
	Field, Reason string
	msg           string
}

// Error says which setting is wrong and why.
func (e *FieldError) Error() string { return e.msg }

// invalid is the FieldError of field: the message is "beamjoin: ", what
// (the setting in words and its value, or "") and the reason.
func invalid(field, what, reason string) *FieldError {
	msg := "beamjoin: " + reason
	if what != "" {
		msg = "beamjoin: " + what + ": " + reason
	}
	return &FieldError{Field: field, Reason: reason, msg: msg}
}

// Validate reports a config that cannot be built, as a *FieldError: a
// missing input, an input its reader rejects (jsonl.Source.Validate), a
// Pub/Sub name of the wrong form, options that the operation does not
// take; and, as a *join.OptionError, options the join rejects (bounds,
// lateness, windows), as join.Route.Check says. Only the input files are
// left to Build to check. It is the one check of a Config: Build and Run
// call it, and the beamjoin command maps its errors to its flags.
func (c Config) Validate() error {
	check, ok := checks[c.Op]
	if !ok {
		return invalid("Op", "", fmt.Sprintf("unknown operation %q (want interval, window, cogroup or asof)", c.Op))
	}
	for _, in := range []struct {
		side, field string
		in          Input
	}{{"left", "Left", c.Left}, {"right", "Right", c.Right}} {
		if err := c.source(in.side, in.in).Validate(); err != nil {
			return sourceInvalid(in.field, err)
		}
	}
	if err := c.checkPubSub(); err != nil {
		return err
	}
	if c.Op == AsOf {
		return c.validateAsOf(check)
	}
	switch {
	case c.MaxAge != 0 || c.LimitAge:
		return invalid("MaxAge", "", fmt.Sprintf("%s takes no max age: it is the as-of join's", c.Op))
	case c.Strict:
		return invalid("Strict", "", fmt.Sprintf("%s takes no strictness: it is the as-of join's", c.Op))
	}
	if c.Op == Interval {
		switch {
		case c.Size != 0:
			return invalid("Size", "", "an interval join takes no window")
		case c.Slide != 0:
			return invalid("Slide", "", "an interval join takes no window")
		case c.Gap != 0:
			return invalid("Gap", "", "an interval join takes no window")
		}
		return check(c.joinOptions()...)
	}
	switch {
	case c.Lower != 0 || c.Upper != 0 || c.LowerExclusive || c.UpperExclusive:
		return invalid("Lower", "", fmt.Sprintf("%s takes no interval bounds", c.Op))
	case c.Emit != join.EmitImmediate:
		return invalid("Emit", "", fmt.Sprintf("%s takes no emission mode: results come when a window closes", c.Op))
	case c.MaxBufferedPerKey != 0:
		return invalid("MaxBufferedPerKey", "", fmt.Sprintf("%s takes no buffer cap", c.Op))
	case c.UniqueLeft:
		return invalid("UniqueLeft", "", fmt.Sprintf("%s takes no unique-left declaration: it is the interval join's", c.Op))
	case c.Op == CoGroup && c.Type != join.Inner:
		return invalid("Type", "", "cogroup takes no join type: every group is reported")
	case c.Gap != 0 && (c.Size != 0 || c.Slide != 0):
		return invalid("Gap", "", fmt.Sprintf("session windows (gap %v) take no size or slide", c.Gap))
	}
	return check(c.joinOptions()...)
}

// sourceInvalid is the FieldError of the side field ("Left" or "Right")
// for err, its reader's verdict on it (a *jsonl.SourceError): a missing
// pattern is a missing input; the watermark's settings are the Config's,
// not the side's.
func sourceInvalid(side string, err error) error {
	var se *jsonl.SourceError
	if !errors.As(err, &se) {
		return err
	}
	words := strings.ToLower(side) + " input"
	switch se.Field {
	case "Pattern":
		return invalid(side+".Pattern", "", "no "+words)
	case "WatermarkLag", "MaxLineBytes", "MaxSkew":
		return &FieldError{Field: se.Field, Reason: se.Reason, msg: "beamjoin: " + strings.TrimPrefix(se.Error(), "beamjoin: "+se.Source+": ")}
	}
	return invalid(side+"."+se.Field, words, se.Reason)
}

// checks are the join's checks of each operation's options.
var checks = map[Op]func(...join.Option) error{
	Interval: join.RouteInterval.Check,
	Window:   join.RouteWindow.Check,
	CoGroup:  join.RouteCoGroup.Check,
	AsOf:     join.RouteAsOf.Check,
}

// joinOptions returns the options of the join that c describes.
func (c Config) joinOptions() []join.Option {
	switch c.Op {
	case AsOf:
		return c.asofOptions()
	case Window, CoGroup:
		opts := []join.Option{join.WindowInto(c.windowFn())}
		if c.Op == Window {
			opts = append(opts, c.Type)
		}
		if c.AllowedLateness != 0 {
			opts = append(opts, join.AllowedLateness(c.AllowedLateness))
		}
		return opts
	}
	opts := []join.Option{join.Between(c.Lower, c.Upper), c.Type, c.Emit}
	if c.LowerExclusive {
		opts = append(opts, join.LowerExclusive())
	}
	if c.UpperExclusive {
		opts = append(opts, join.UpperExclusive())
	}
	if c.AllowedLateness != 0 {
		opts = append(opts, join.AllowedLateness(c.AllowedLateness))
	}
	if c.MaxBufferedPerKey != 0 {
		opts = append(opts, join.MaxBufferedPerKey(c.MaxBufferedPerKey))
	}
	if c.UniqueLeft {
		opts = append(opts, join.UniqueLeft())
	}
	return opts
}

// windowFn returns the windows of a window join or cogroup: sessions when
// Gap is set, sliding windows when Slide is, else fixed windows.
func (c Config) windowFn() *window.Fn {
	switch {
	case c.Gap != 0:
		return window.NewSessions(c.Gap)
	case c.Slide != 0:
		return window.NewSlidingWindows(c.Slide, c.Size)
	}
	return window.NewFixedWindows(c.Size)
}
