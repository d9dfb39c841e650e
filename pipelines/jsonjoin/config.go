// This file holds the Config, one command line, and its vocabulary. What a
// Config may hold is checked in one place, newPlan (plan.go), which turns
// it into the plan that the pipeline's stages read.

package jsonjoin

import (
	"strings"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Op is which operation joins the inputs: a route of the package, named
// as the beamjoin command's subcommand (Interval, Window, CoGroup, AsOf,
// Multi, each declared in the route's file).
type Op string

// Input is one side of a join: JSON-lines files (a name or a glob) and
// where in each line the key and the event time are (dotted paths).
type Input struct {
	Pattern string
	Fields  jsonl.Fields
}

// Bounds are the bounds of one input of the multi-way join after the
// first, relative to the first: an element at ts matches an anchor
// element at ts(a) iff Lower <= ts - ts(a) <= Upper (join.Between).
type Bounds struct {
	Lower, Upper time.Duration
}

// Config is a whole join of JSON-lines inputs: what to read, how to join,
// and where the results go. The zero values of the optional fields are
// the beamjoin command's defaults.
type Config struct {
	Op Op
	// Left and Right are the inputs of the joins of two (Interval,
	// Window, CoGroup, AsOf).
	Left, Right Input

	// Multi only: the inputs, three or more, the anchor first (Left and
	// Right are not set); the bounds of each input after the first,
	// relative to the anchor, in input order; and the numbers (1-based)
	// of the optional inputs, which a row may lack (join.Optional; the
	// others are join.Required, and the anchor cannot be optional). The
	// inputs are named input1…inputN in the Summary and the Progress.
	Inputs   []Input
	Bounds   []Bounds
	Optional []int

	// Interval only: the bounds of ts(right) - ts(left), inclusive unless
	// marked exclusive; the emission mode; the cap on elements buffered per
	// key (zero: none). Interval, Window, CoGroup and Multi: the allowed
	// lateness.
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
	// join.Inner). Interval, AsOf and Multi: the emission mode; for AsOf,
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

	// Replay, when true, replays the inputs as one stream, each file in
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

	// streamingBatch makes a join of files read whole use the path of a
	// stream (the interval join's stateful one rather than join.Bounded,
	// the window join's and cogroup's late-counting one rather than
	// CoGroupByKey): benchmarks compare the two (export_test.go).
	streamingBatch bool
}

// Validate reports a config that cannot be built, as a *FieldError: a
// missing input, an input its reader rejects (jsonl.Source.Validate), a
// Pub/Sub name of the wrong form, options that the operation does not
// take; and, as a *join.OptionError, options the join rejects (bounds,
// lateness, windows), as join.Route.Check says. Only the input files are
// left to Build to check. It is the one check of a Config: Build and Run
// make the same check, and the beamjoin command maps its errors to its
// flags.
func (c Config) Validate() error {
	_, err := newPlan(c)
	return err
}

// PubSub is the prefix that names a Pub/Sub subscription or topic where a
// Config names a file: an input "pubsub:projects/P/subscriptions/S" is
// read as a stream (pubsubio.Read), an output
// "pubsub:projects/P/topics/T" gets one message per record
// (pubsubio.Write), with the record's event time in the attribute
// pubsubio.DefaultTimeAttribute. The client library's rules choose the
// service: PUBSUB_EMULATOR_HOST, when set, names an emulator or a fake
// (such as `beamjoin pubsub-fake`).
const PubSub = "pubsub:"

// AttributeTime is the prefix of an input's Fields.Time that takes a Pub/Sub
// message's event time from the named attribute rather than from a field
// of its JSON object: "attribute:event_time". Files have no attributes.
const AttributeTime = "attribute:"

// pubsubName returns the subscription or topic that path names, and
// whether it names one.
func pubsubName(path string) (string, bool) { return strings.CutPrefix(path, PubSub) }

// Streaming reports whether c reads a Pub/Sub subscription: its job reads
// a stream that has no end, and runs until it is cancelled.
func (c Config) Streaming() bool {
	for _, in := range append([]Input{c.Left, c.Right}, c.Inputs...) {
		if _, ok := pubsubName(in.Pattern); ok {
			return true
		}
	}
	return false
}
