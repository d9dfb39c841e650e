// This file holds the Pub/Sub side of a join: subscriptions as inputs and
// topics as outputs, named where a Config names a file with the prefix
// "pubsub:", and the run of a streaming job. Files are read and written in
// io.go.

package jsonjoin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
)

func init() {
	register.DoFn3x0[pubsubio.Message, func(string, jsonl.Record), func(jsonl.DeadLetter)](&messageFn{})
	register.Function1x1(pubsubDeadLetter)
	register.Emitter2[string, jsonl.Record]()
	register.Emitter1[jsonl.DeadLetter]()
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

var (
	subscriptionName = regexp.MustCompile(`^projects/[^/]+/subscriptions/[^/]+$`)
	topicName        = regexp.MustCompile(`^projects/[^/]+/topics/[^/]+$`)
)

// pubsubName returns the subscription or topic that path names, and
// whether it names one.
func pubsubName(path string) (string, bool) { return strings.CutPrefix(path, PubSub) }

// Streaming reports whether c reads a Pub/Sub subscription: its job reads
// a stream that has no end, and runs until it is cancelled.
func (c Config) Streaming() bool {
	_, l := pubsubName(c.Left.Pattern)
	_, r := pubsubName(c.Right.Pattern)
	return l || r
}

// checkPubSub reports a Pub/Sub name of the wrong form, a time attribute
// for a file, an idle time for files or one that is not whole positive
// milliseconds, a skew bound for files read whole or one that is not
// whole positive milliseconds, and a file output of a streaming join (files are written when
// a join ends, and a stream does not end).
func (c Config) checkPubSub() error {
	for _, in := range []struct {
		side, field string
		in          Input
	}{{"left", "Left", c.Left}, {"right", "Right", c.Right}} {
		sub, ok := pubsubName(in.in.Pattern)
		switch {
		case ok && !subscriptionName.MatchString(sub):
			return invalid(in.field+".Pattern", fmt.Sprintf("%s input %q", in.side, in.in.Pattern), "a Pub/Sub input is a subscription, "+PubSub+"projects/PROJECT/subscriptions/SUBSCRIPTION")
		case !ok && strings.HasPrefix(in.in.Fields.Time, AttributeTime):
			return invalid(in.field+".Fields.Time", in.side+" input", fmt.Sprintf("time %q is a message attribute, and only Pub/Sub inputs have attributes", in.in.Fields.Time))
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

// readPubSub reads a subscription as records keyed as jsonl.Read keys
// lines, and dead letters: messages that are not JSON objects, or whose
// key or event time is missing or bad. Messages are de-duplicated by the
// record ID that `beamjoin publish` sets (pubsubio.DefaultIDAttribute), or
// by message ID when a message has none. The watermark moves by the clock
// after IdleAfter without a message (pubsubio.DefaultIdleAfter when zero):
// a join run from the command must close its windows and emit its outer
// records on a quiet stream too, at the risk pubsubio.IdleAfter states.
func (c Config) readPubSub(s beam.Scope, side, sub string, f jsonl.Fields) (records, deadLetters beam.PCollection, err error) {
	idle := c.IdleAfter
	if idle == 0 {
		idle = pubsubio.DefaultIdleAfter
	}
	opts := []pubsubio.Option{pubsubio.Name(side), pubsubio.WatermarkLag(c.WatermarkLag),
		pubsubio.IDAttribute(pubsubio.DefaultIDAttribute), pubsubio.IdleAfter(idle)}
	if c.MaxSkew > 0 {
		opts = append(opts, pubsubio.MaxSkew(c.MaxSkew))
	}
	if attr, ok := strings.CutPrefix(f.Time, AttributeTime); ok {
		opts = append(opts, pubsubio.TimeAttribute(attr))
	} else {
		opts = append(opts, pubsubio.TimeField(f.Time))
	}
	msgs, dead, err := pubsubio.TryRead(s, sub, opts...)
	if err != nil {
		return records, deadLetters, err
	}
	records, badKeys := beam.ParDo2(s, &messageFn{Subscription: sub, Key: f.Key}, msgs)
	return records, beam.Flatten(s, badKeys, beam.ParDo(s, pubsubDeadLetter, dead)), nil
}

// messageFn keys a message by its key field; its event time is the
// element's, which pubsubio.Read gave it.
type messageFn struct {
	Subscription string
	Key          string
}

func (f *messageFn) ProcessElement(m pubsubio.Message, emit func(string, jsonl.Record), bad func(jsonl.DeadLetter)) {
	key, err := jsonl.Fields{Key: f.Key}.ParseKey(m.Data)
	if err != nil {
		bad(jsonl.DeadLetter{File: PubSub + f.Subscription, Line: messageLine(m.ID), Error: err.Error(), Raw: string(m.Data)})
		return
	}
	emit(key, jsonl.Record{File: PubSub + f.Subscription, Line: messageLine(m.ID), Raw: m.Data})
}

// pubsubDeadLetter is a message pubsubio.Read could not read, as the dead
// letter of a line: File is the subscription, Line the message ID.
func pubsubDeadLetter(d pubsubio.DeadLetter) jsonl.DeadLetter {
	return jsonl.DeadLetter{File: PubSub + d.Subscription, Line: messageLine(d.MessageID), Error: d.Error, Raw: d.Data}
}

// messageLine is where a message's record or dead letter says it is: its
// message ID, a decimal number on Pub/Sub and its fakes, and 0 for an ID
// that is not one.
func messageLine(id string) int64 {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// writeTopic publishes lines to topic, one message each.
func writeTopic(s beam.Scope, topic string, lines beam.PCollection) error {
	return pubsubio.TryWrite(s, topic, lines)
}

// ErrStopped is what Run returns when the context of a streaming job (see
// Config.Streaming) is cancelled: the way such a job ends.
var ErrStopped = errors.New("beamjoin: the streaming join was stopped")

// runStreaming runs a streaming job once: it reads messages that a second
// run would not see again (they are acknowledged), so Prism's known bugs
// are not retried (see internal/prismrun) but reported. It returns the
// runner's ID of the job when the runner returned while the job runs on
// (an asynchronous submission).
func runStreaming(ctx context.Context, runner string, p *beam.Pipeline) (jobID string, err error) {
	prismrun.QuietInTests()
	pr, err := beam.Run(ctx, runner, p)
	bug := prismrun.KnownBug(err)
	switch {
	case ctx.Err() != nil:
		return "", ErrStopped
	case bug != "":
		return "", fmt.Errorf("beamjoin: Prism v2.77 failed the streaming job with a known bug of its own (%s), not a fault of the data; a stream is not run again by itself: run the command again to go on from the messages not yet acknowledged", bug)
	case err != nil:
		return "", fmt.Errorf("beamjoin: pipeline failed: %w", err)
	case pr != nil && *jobopts.Async:
		return pr.JobID(), nil
	}
	return "", nil
}
