// This file holds the plan: a Config checked once and taken apart into
// what each stage of the pipeline reads. newPlan is the one reader of a
// Config's settings and the one place that checks them; the stages (read
// in read.go, the route's join stage in the route's file, write in
// write.go, the accounting in accounting.go) and Run (run.go) each read
// their part of the plan, and none checks a Config again or derives
// anything from it. A route's own settings are checked by its case of the
// plan (planInterval in interval.go, …), which its row of routes names.

package jsonjoin

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// plan is a Config checked, as the stages read it: data flows from it one
// way, through the sources, the join, the sinks and the accounting, each
// stage given its part.
type plan struct {
	op Op
	// sides are the route's inputs, as the Config gives them.
	sides []side
	// streaming says that an input is a subscription: the job never ends,
	// its outputs are topics, and it writes no accounting.
	streaming  bool
	sources    []sourcePlan // in the order of the sides: left, then right, or input1 …
	join       joinPlan
	sinks      sinksPlan
	accounting accountingPlan
	// run is how Run runs the job; planRun makes it, newPlan leaves it
	// zero (Build only builds).
	run runPlan
}

// side is one input of a Config as its route names it: the joins of two
// name theirs left and right (twoSides), the multi-way join input1 to
// inputN (multiSides).
type side struct {
	// name is the input's reader's name and the prefix of its counts:
	// "left", "input2".
	name string
	// field is the Config field that gives the input, as a FieldError
	// names it ("Left", "Inputs[1]"), and words how an error says it
	// ("left input", "input 2").
	field, words string
	in           Input
}

// twoSides are the inputs of a join of two, left then right.
func twoSides(c Config) []side {
	return []side{{"left", "Left", "left input", c.Left}, {"right", "Right", "right input", c.Right}}
}

// sides are c's inputs as its route names them; a Config whose Op names
// no route has a left and a right input.
func (c Config) sides() []side {
	if r, ok := routeOf(c.Op); ok {
		return r.sides(c)
	}
	return twoSides(c)
}

// sourcePlan is one input as the read stage reads it (read.go).
type sourcePlan struct {
	// name is the input's side's name ("left", "input2"): its reader's
	// name and the prefix of its counts.
	name string
	// file reads the input's files when sub is empty, with every setting
	// of the reader made: the replay's watermark and, when the reader
	// judges lateness, how late a line may be.
	file jsonl.Source
	// sub is the subscription that the input names, read with subOptions,
	// its messages keyed by the field key.
	sub        string
	subOptions []pubsubio.Option
	key        string
}

// joinPlan is the join stage as a route's case of the plan makes it: the
// route's join and every option it is built with, those that choose its
// path included (join.Bounded for files read whole; join.ReportLate and
// join.TrackFates where a window can close before its elements come).
type joinPlan struct {
	stage   joinFunc
	options []join.Option
	// inputs, for a join that takes options per input (join.Multi), make
	// each input after the first from its records, in the order of the
	// sources: join.Required or join.Optional, with the input's bounds.
	inputs []func(beam.PCollection) join.MultiInput
	// lateBehind, when the reader of a replay judges lateness (an
	// interval or as-of join), is how far behind the watermark a line of
	// each side, in the order of the sources, may be read and still be joined
	// (jsonl.Source.LateBehind); nil when the reader does not judge it.
	// newPlan gives it to the sources.
	lateBehind []time.Duration
}

// sinksPlan is where the write stage writes (write.go) and how it writes
// the join's records.
type sinksPlan struct {
	// out gets the join's records, each written by format.
	out    sink
	format any
	// late gets the join's late elements, each written by formatLate,
	// and the lines the reader judged late; none when they are only
	// counted.
	late       sink
	formatLate any
	// deadLetter gets the inputs' dead letters; none when they are only
	// counted.
	deadLetter sink
}

// sink is where lines go: a file (package jsonl; "-" is standard
// output), or a Pub/Sub topic. The zero sink is none.
type sink struct {
	file, topic string
}

// sinkOf is the sink that a Config's output path names: a topic
// (PubSub), a file, or none ("").
func sinkOf(path string) sink {
	if topic, ok := pubsubName(path); ok {
		return sink{topic: topic}
	}
	return sink{file: path}
}

// accountingPlan is what the accounting stage counts, and where it
// writes the counts (accounting.go).
type accountingPlan struct {
	// path is where the counts go; "" for nowhere: a stream's combines
	// never end, and remote workers without Config.Accounting have no
	// file that this process can read. Run sets a temporary file when
	// runPlan.tempAccounting says so.
	path string
	// hub is the id of the progress hub that the counting DoFns feed; Run
	// sets it when runPlan.hub says so.
	hub string
	// sides are the inputs' names and fields, in the order of the
	// sources: a dead letter's reason names the field at fault.
	sides []accountedSide
	// count, countLate and countFate make the DoFns that count the
	// join's records, late elements and fates.
	count, countLate, countFate func(counter) any
}

// accountedSide is an input as the accounting names it.
type accountedSide struct {
	name   string
	fields jsonl.Fields
}

// runPlan is how Run runs the job, as the runner's flags and the Config
// say.
type runPlan struct {
	runner string
	// tempAccounting says that Run writes the accounting to a temporary
	// file: the Config names none, the workers share this machine's files,
	// and the job ends.
	tempAccounting bool
	// hub says that the counting DoFns feed a progress hub in this
	// process: the workers run here, and there is progress to report or
	// a stream to say, when it stops, what it had done.
	hub bool
	// progress, when set, is called every progressEvery.
	progress      func(Progress)
	progressEvery time.Duration
}

// FieldError is a Config that cannot be built, found by Validate: Field
// names the Config field at fault as a Go selector ("Op", "Left.Pattern",
// "Left.Fields.Key", "Inputs[2].Pattern", "Bounds[0]", "WatermarkLag",
// "IdleAfter", "MaxSkew", "Size", "Gap", "Out", …), and Reason says what
// is wrong with its value, so that a command can name its own flag. An option that the join itself rejects is a
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

// newPlan checks c and makes its plan: the operation; the reader of each
// input, as the route names its inputs (its sides), with
// jsonl.Source.Validate; the Pub/Sub names and settings (checkPubSub);
// the settings that belong to another route (its refuseElsewhere); then
// the route's own settings and the options of its join (the route's case
// of the plan: planInterval, …). Its errors are Validate's, in this
// order.
func newPlan(c Config) (*plan, error) {
	r, ok := routeOf(c.Op)
	if !ok {
		return nil, invalid("Op", "", fmt.Sprintf("unknown operation %q (want %s)", c.Op, routeNames()))
	}
	sides := r.sides(c)
	files := make([]jsonl.Source, len(sides))
	for i, sd := range sides {
		files[i] = c.fileSource(sd.name, sd.in)
		if err := files[i].Validate(); err != nil {
			return nil, sourceInvalid(sd, err)
		}
	}
	if err := c.checkPubSub(sides); err != nil {
		return nil, err
	}
	for _, other := range routes {
		if other.op == r.op || other.refuseElsewhere == nil {
			continue
		}
		if err := other.refuseElsewhere(c); err != nil {
			return nil, err
		}
	}
	j, err := r.plan(c)
	if err != nil {
		return nil, err
	}
	j.stage = r.join
	step := watermarkStep(r.span(c))

	p := &plan{op: c.Op, sides: sides, streaming: c.Streaming(), join: j}
	for i, sd := range sides {
		src := sourcePlan{name: sd.name}
		if sub, ok := pubsubName(sd.in.Pattern); ok {
			src.sub, src.key, src.subOptions = sub, sd.in.Fields.Key, c.subscriptionOptions(sd.name, sd.in.Fields)
		} else {
			src.file = files[i]
			src.file.WatermarkStep = step
			if j.lateBehind != nil {
				src.file.JudgeLate, src.file.LateBehind = true, j.lateBehind[i]
			}
		}
		p.sources = append(p.sources, src)
		p.accounting.sides = append(p.accounting.sides, accountedSide{name: sd.name, fields: sd.in.Fields})
	}
	p.sinks = sinksPlan{out: sinkOf(cmp.Or(c.Out, "-")), format: r.format, late: sinkOf(c.Late), formatLate: r.formatLate, deadLetter: sinkOf(c.DeadLetter)}
	p.accounting.count, p.accounting.countLate, p.accounting.countFate = r.count, r.countLate, r.countFate
	if !p.streaming {
		p.accounting.path = c.Accounting
	}
	return p, nil
}

// planRun is newPlan for Run on runner: it also checks the files that c
// names (CheckFiles, for the runner's workers) and says how to run the
// job.
func planRun(c Config, runner string) (*plan, error) {
	p, err := newPlan(c)
	if err != nil {
		return nil, err
	}
	w := WorkersOf(runner)
	if err := checkFiles(c.files(p.sides), w); err != nil {
		return nil, err
	}
	p.run = runPlan{
		runner:         runner,
		tempAccounting: p.accounting.path == "" && w != Remote && !p.streaming,
		hub:            (c.Progress != nil || p.streaming) && w == InProcess,
		progress:       c.Progress,
		progressEvery:  c.ProgressEvery,
	}
	if p.run.progressEvery <= 0 {
		p.run.progressEvery = DefaultProgressEvery
	}
	return p, nil
}

// sourceInvalid is the FieldError of sd's field ("Left", "Inputs[1]")
// for err, its reader's verdict on it (a *jsonl.SourceError): a missing
// pattern is a missing input; the watermark's settings are the Config's,
// not the side's.
func sourceInvalid(sd side, err error) error {
	var se *jsonl.SourceError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Field {
	case "Pattern":
		return invalid(sd.field+".Pattern", "", "no "+sd.words)
	case "WatermarkLag", "MaxLineBytes", "MaxSkew":
		return &FieldError{Field: se.Field, Reason: se.Reason, msg: "beamjoin: " + strings.TrimPrefix(se.Error(), "beamjoin: "+se.Source+": ")}
	}
	return invalid(sd.field+"."+se.Field, sd.words, se.Reason)
}

// fileSource is the jsonl source of one side's files, but for the
// watermark step, which is the route's (watermarkStep) and which newPlan
// sets once the route's case of the plan has checked the Config (a step
// of zero is one that Validate takes). A skew bound guards a replay's
// watermark; files read whole have none to guard (checkPubSub refuses a
// bound for a join that has neither a replay nor a stream).
func (c Config) fileSource(side string, in Input) jsonl.Source {
	src := jsonl.Source{
		Name:         side,
		Pattern:      in.Pattern,
		Fields:       in.Fields,
		MaxLineBytes: c.MaxLineBytes,
		Replay:       c.Replay,
		WatermarkLag: c.WatermarkLag,
	}
	if c.Replay {
		src.MaxSkew = c.MaxSkew
	}
	return src
}

// watermarkStep is how far a replay's event time must rise between two
// watermark reports: a quarter of the route's span (the time an element
// waits in the join for partners, or the time between two window ends),
// and at least a millisecond. Finer reports would let the join clean up
// or close windows a little sooner, at the cost of a checkpoint each;
// coarser ones would hold more buffered state.
func watermarkStep(span time.Duration) time.Duration {
	return max(span/4/time.Millisecond*time.Millisecond, time.Millisecond)
}

var (
	subscriptionName = regexp.MustCompile(`^projects/[^/]+/subscriptions/[^/]+$`)
	topicName        = regexp.MustCompile(`^projects/[^/]+/topics/[^/]+$`)
)

// checkPubSub reports a Pub/Sub name of the wrong form among the inputs
// sides and the outputs, a time attribute for a file, an idle time for
// files or one that is not whole positive milliseconds, a skew bound for
// files read whole or one that is not whole positive milliseconds, and a
// file output of a streaming join (files are written when a join ends,
// and a stream does not end).
func (c Config) checkPubSub(sides []side) error {
	for _, sd := range sides {
		sub, ok := pubsubName(sd.in.Pattern)
		switch {
		case ok && !subscriptionName.MatchString(sub):
			return invalid(sd.field+".Pattern", fmt.Sprintf("%s %q", sd.words, sd.in.Pattern), "a Pub/Sub input is a subscription, "+PubSub+"projects/PROJECT/subscriptions/SUBSCRIPTION")
		case !ok && strings.HasPrefix(sd.in.Fields.Time, AttributeTime):
			return invalid(sd.field+".Fields.Time", sd.words, fmt.Sprintf("time %q is a message attribute, and only Pub/Sub inputs have attributes", sd.in.Fields.Time))
		}
	}
	switch {
	case c.IdleAfter != 0 && !c.Streaming():
		return invalid("IdleAfter", fmt.Sprint("idle time ", c.IdleAfter), "only a Pub/Sub input goes idle; files are read to their end")
	case c.IdleAfter < 0 || c.IdleAfter%time.Millisecond != 0:
		return invalid("IdleAfter", fmt.Sprint("idle time ", c.IdleAfter), "want a positive whole number of milliseconds")
	case c.MaxSkew != 0 && !c.Replay && !c.Streaming():
		return invalid("MaxSkew", fmt.Sprint("skew bound ", c.MaxSkew), "only a replay or a Pub/Sub input has a watermark for it to guard; files read whole move event time only at their end")
	case c.MaxSkew < 0 || c.MaxSkew%time.Millisecond != 0:
		return invalid("MaxSkew", fmt.Sprint("skew bound ", c.MaxSkew), "want a positive whole number of milliseconds")
	}
	for _, out := range []struct{ field, path string }{{"Out", c.Out}, {"Late", c.Late}, {"DeadLetter", c.DeadLetter}} {
		topic, ok := pubsubName(out.path)
		switch {
		case ok && !topicName.MatchString(topic):
			return invalid(out.field, fmt.Sprintf("%s %q", fieldWords[out.field], out.path), "a Pub/Sub output is a topic, "+PubSub+"projects/PROJECT/topics/TOPIC")
		case !ok && c.Streaming() && (out.path != "" || out.field == "Out"):
			path := out.path
			if path == "" {
				path = "-"
			}
			return invalid(out.field, fmt.Sprintf("%s %q", fieldWords[out.field], path), "a join that reads Pub/Sub runs until it is stopped, and files and standard output are written when a join ends; give a topic, "+PubSub+"projects/PROJECT/topics/TOPIC")
		}
	}
	return nil
}

// subscriptionOptions are the options of pubsubio.Read for one side's
// subscription. Messages are de-duplicated by the record ID that
// `beamjoin publish` sets (pubsubio.DefaultIDAttribute), or by message ID
// when a message has none. The watermark moves by the clock after
// IdleAfter without a message (pubsubio.DefaultIdleAfter when zero): a
// join run from the command must close its windows and emit its outer
// records on a quiet stream too, at the risk pubsubio.IdleAfter states.
func (c Config) subscriptionOptions(side string, f jsonl.Fields) []pubsubio.Option {
	opts := []pubsubio.Option{pubsubio.Name(side), pubsubio.WatermarkLag(c.WatermarkLag),
		pubsubio.IDAttribute(pubsubio.DefaultIDAttribute), pubsubio.IdleAfter(cmp.Or(c.IdleAfter, pubsubio.DefaultIdleAfter))}
	if c.MaxSkew > 0 {
		opts = append(opts, pubsubio.MaxSkew(c.MaxSkew))
	}
	if attr, ok := strings.CutPrefix(f.Time, AttributeTime); ok {
		opts = append(opts, pubsubio.TimeAttribute(attr))
	} else {
		opts = append(opts, pubsubio.TimeField(f.Time))
	}
	return opts
}
