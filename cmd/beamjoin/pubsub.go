// This file holds the two subcommands that run a streaming join on one
// machine with no cloud account: pubsub-fake, a Pub/Sub emulator made of the
// client library's fake (pstest), and publish, which sends a JSON-lines file
// to a topic with each line's event time as an attribute.

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
)

const fakeUsage = `Usage: beamjoin pubsub-fake [--port N] [--topic projects/P/topics/T]...

Serves the Pub/Sub API on localhost:N from the client library's in-memory
fake (pstest), until interrupted, so that a streaming join runs on one
machine with no cloud account. Each --topic creates the topic and a
subscription of the same name (projects/P/subscriptions/T). Other commands
reach it with PUBSUB_EMULATOR_HOST=localhost:N in their environment.
Messages live only as long as the fake.

Example:
  beamjoin pubsub-fake --port 8085 --topic projects/demo/topics/orders \
    --topic projects/demo/topics/payments --topic projects/demo/topics/results

Flags:
`

const publishUsage = `Usage: beamjoin publish --topic projects/P/topics/T --time FIELD [--speed X] FILE...

Publishes every line of the JSON-lines FILEs to the topic, one message per
line, with the line's event time (FIELD, a dotted path to epoch
milliseconds or an RFC 3339 string) in epoch milliseconds in the attribute
` + pubsubio.DefaultTimeAttribute + ` (--time-attribute). A line whose time cannot be read is
published without it, and counted on standard error. Each message also gets
a record ID in the attribute ` + pubsubio.DefaultIDAttribute + `, made from the line's content
and how many equal lines came before it, so that a join reading the
subscription drops a line published twice (running publish again on the
same files) within its de-duplication window (10 minutes of event time). The topic is Pub/Sub's,
or an emulator's when PUBSUB_EMULATOR_HOST is set.

Lines go in the order of the files and of their lines, all at once, or,
with --speed X, paced by event time: a line is sent when X times the
wall-clock time since the first line has passed its event time less the
first line's (--speed 60 sends an hour of event time in a minute; 1 as it
happened). A line earlier than one sent before it, or without a time, goes
at once.

Example:
  PUBSUB_EMULATOR_HOST=localhost:8085 beamjoin publish \
    --topic projects/demo/topics/orders --time ts testdata/orders.jsonl
  PUBSUB_EMULATOR_HOST=localhost:8085 beamjoin publish \
    --topic projects/demo/topics/payments --time ts --speed 600 testdata/payments.jsonl

Flags:
`

var topicFlagName = regexp.MustCompile(`^projects/([^/]+)/topics/([^/]+)$`)

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// subFlags parses the flags of a subcommand that is not a join, and
// returns the status to exit with when it should not go on.
func subFlags(fs *flag.FlagSet, usage string, args []string) (exit int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(usage)
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return 0, false
		}
		return fail(usagef("%s: %v (run 'beamjoin %s --help')", fs.Name(), err, strings.TrimPrefix(fs.Name(), "beamjoin "))), false
	}
	return 0, true
}

// pubsubFake is `beamjoin pubsub-fake`.
func pubsubFake(args []string) int {
	fs := flag.NewFlagSet("beamjoin pubsub-fake", flag.ContinueOnError)
	port := fs.Int("port", 8085, "serve on localhost:`N`")
	var topics listFlag
	fs.Var(&topics, "topic", "create topic `projects/P/topics/T` and subscription projects/P/subscriptions/T (may be repeated)")
	if exit, ok := subFlags(fs, fakeUsage, args); !ok {
		return exit
	}
	if fs.NArg() > 0 {
		return fail(usagef("pubsub-fake: unexpected argument %q", fs.Arg(0)))
	}
	for _, t := range topics {
		if !topicFlagName.MatchString(t) {
			return fail(usagef("--topic %s: want projects/PROJECT/topics/TOPIC", t))
		}
	}
	addr := fmt.Sprintf("localhost:%d", *port)
	// pstest panics when it cannot listen: say why instead.
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fail(usagef("--port %d: %v", *port, err))
	}
	l.Close()
	srv := pstest.NewServerWithPort(*port)
	defer srv.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := createTopics(ctx, srv.Addr, topics); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "beamjoin: Pub/Sub fake serving on %s until interrupted; in other shells: export PUBSUB_EMULATOR_HOST=%s\n", srv.Addr, srv.Addr)
	<-ctx.Done()
	return 0
}

// createTopics creates each topic on the fake at addr, with a subscription
// of the same name.
func createTopics(ctx context.Context, addr string, topics []string) error {
	os.Setenv("PUBSUB_EMULATOR_HOST", addr)
	for _, t := range topics {
		m := topicFlagName.FindStringSubmatch(t)
		client, err := pubsub.NewClient(ctx, m[1])
		if err != nil {
			return fmt.Errorf("beamjoin: a client of the fake: %w", err)
		}
		sub := "projects/" + m[1] + "/subscriptions/" + m[2]
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: t}); err != nil {
			client.Close()
			return fmt.Errorf("beamjoin: creating topic %s: %w", t, err)
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: t, AckDeadlineSeconds: 60}); err != nil {
			client.Close()
			return fmt.Errorf("beamjoin: creating subscription %s: %w", sub, err)
		}
		client.Close()
		fmt.Fprintf(os.Stderr, "beamjoin: topic %s, subscription %s\n", t, sub)
	}
	return nil
}

// publish is `beamjoin publish`.
func publish(args []string) int {
	fs := flag.NewFlagSet("beamjoin publish", flag.ContinueOnError)
	topic := fs.String("topic", "", "the `projects/P/topics/T` to publish to (required)")
	tim := fs.String("time", "", "event-time `FIELD` of each line, a dotted path (required)")
	attr := fs.String("time-attribute", pubsubio.DefaultTimeAttribute, "the message attribute that gets the event time, as `NAME`")
	speed := fs.Float64("speed", 0, "pace the lines by event time, `X` times as fast as it passed (default 0: all at once)")
	if exit, ok := subFlags(fs, publishUsage, args); !ok {
		return exit
	}
	m := topicFlagName.FindStringSubmatch(*topic)
	switch {
	case *topic == "":
		return fail(usagef("publish: --topic is required (e.g. --topic projects/demo/topics/orders)"))
	case m == nil:
		return fail(usagef("--topic %s: want projects/PROJECT/topics/TOPIC", *topic))
	case *tim == "":
		return fail(usagef("publish: --time FIELD is required: where each line's event time is"))
	case *attr == "":
		return fail(usagef("--time-attribute: give an attribute name"))
	case *speed < 0 || math.IsNaN(*speed) || math.IsInf(*speed, 0):
		return fail(usagef("--speed %v: want a positive factor (e.g. 60: a minute of event time a second), or 0 for no pacing", *speed))
	case fs.NArg() == 0:
		return fail(usagef("publish: give one or more JSON-lines files"))
	}
	fields := jsonl.Fields{Key: *tim, Time: *tim}
	if err := fields.Validate(); err != nil {
		return fail(usagef("--time %s: %s", *tim, trimPrefix(err)))
	}
	files := make([]*os.File, 0, fs.NArg())
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return fail(usagef("%v", err))
		}
		defer f.Close()
		files = append(files, f)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := pubsub.NewClient(ctx, m[1])
	if err != nil {
		return fail(fmt.Errorf("beamjoin: a Pub/Sub client for project %s: %w", m[1], err))
	}
	defer client.Close()
	pub := client.Publisher(*topic)
	defer pub.Stop()

	pace := newPacer(*speed, time.Now, sleepCtx(ctx))
	ids := pubsubio.NewRecordIDs()
	var results []*pubsub.PublishResult
	var untimed int
	var firstUntimed string
	for _, f := range files {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, jsonl.DefaultMaxLineBytes)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			msg := &pubsub.Message{Data: []byte(line)}
			msg.Attributes = map[string]string{pubsubio.DefaultIDAttribute: ids.Next(msg.Data)}
			if ts, err := fields.ParseTime(msg.Data); err != nil {
				untimed++
				if firstUntimed == "" {
					firstUntimed = fmt.Sprintf("%s:%d: %v", f.Name(), n, err)
				}
			} else {
				msg.Attributes[*attr] = pubsubio.FormatTime(ts)
				pace.wait(ts)
			}
			if ctx.Err() != nil {
				return fail(fmt.Errorf("beamjoin: publish interrupted after %d messages", len(results)))
			}
			results = append(results, pub.Publish(ctx, msg))
		}
		if err := sc.Err(); err != nil {
			return fail(fmt.Errorf("beamjoin: reading %s: %w", f.Name(), err))
		}
	}
	for _, r := range results {
		if _, err := r.Get(ctx); err != nil {
			return fail(fmt.Errorf("beamjoin: publishing to %s: %w", *topic, err))
		}
	}
	fmt.Fprintf(os.Stderr, "beamjoin: published %d messages to %s\n", len(results), *topic)
	if untimed > 0 {
		fmt.Fprintf(os.Stderr, "beamjoin: %d of them without the %s attribute, their time being unreadable (first: %s)\n", untimed, *attr, firstUntimed)
	}
	return 0
}

// pacer paces lines by event time: the line of event time ts is due when
// the wall-clock time since the first line, times speed, reaches ts less
// the first line's time. A zero speed paces nothing.
type pacer struct {
	speed float64
	now   func() time.Time
	sleep func(time.Duration)

	started bool
	start   time.Time // when the first line went
	first   int64     // its event time
}

func newPacer(speed float64, now func() time.Time, sleep func(time.Duration)) *pacer {
	return &pacer{speed: speed, now: now, sleep: sleep}
}

// wait returns when the line of event time ts is due.
func (p *pacer) wait(ts int64) {
	if p.speed == 0 {
		return
	}
	if !p.started {
		p.started, p.start, p.first = true, p.now(), ts
		return
	}
	due := p.start.Add(time.Duration(float64(ts-p.first) * float64(time.Millisecond) / p.speed))
	if d := due.Sub(p.now()); d > 0 {
		p.sleep(d)
	}
}

// sleepCtx returns a sleep that ends early when ctx does.
func sleepCtx(ctx context.Context) func(time.Duration) {
	return func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}
