// This file holds the options of Read and Write and their validation.

package pubsubio

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// DefaultTimeAttribute is the message attribute that carries a record's
// event time when no TimeAttribute option names another: Write sets it and
// Read reads it.
const DefaultTimeAttribute = "event_time"

// DefaultIDAttribute is the message attribute in which `beamjoin publish`
// gives each message an ID of its own, for IDAttribute.
const DefaultIDAttribute = "record_id"

// DefaultIdleAfter is a common choice for IdleAfter, ten seconds, and the
// one package jsonjoin (so the beamjoin command) makes when its
// configuration gives none. Read itself moves its watermark on a quiet
// subscription only when given IdleAfter.
const DefaultIdleAfter = 10 * time.Second

// DefaultDedupWindow is how long Read remembers a message's ID when no
// DeduplicateFor option says otherwise: ten minutes, as Dataflow's own
// Pub/Sub source.
const DefaultDedupWindow = 10 * time.Minute

// An Option configures Read or Write. Options are values made by the
// functions of this package, in the style of package join's: each says
// which of the two transforms it applies to, they are validated once, when
// the transform is added, and giving one to the other transform is an
// error (TryRead and TryWrite return it; Read and Write panic with it).
type Option interface {
	pubsubOption() option
}

// option is what an Option says: its function's name, the transforms it
// applies to, and how it sets the configuration.
type option struct {
	name  string
	read  bool // applies to Read
	write bool // applies to Write
	set   func(*config) error
}

// config is the validated configuration of a Read or a Write.
type config struct {
	name          string
	timeAttribute string
	timeField     string
	timeChosen    bool // an option chose where event time is
	lag           time.Duration
	idleAfter     time.Duration // zero: the watermark never moves by the clock
	maxSkew       time.Duration // zero: event times are not bounded
	idAttribute   string
	dedupWindow   time.Duration // zero: duplicates are kept
	readers       int
}

func defaultConfig() config {
	return config{timeAttribute: DefaultTimeAttribute, dedupWindow: DefaultDedupWindow, readers: 1}
}

// Name sets the prefix of Read's counters (namespace "beamjoin"):
// NAME_read, NAME_invalid, NAME_publish_time and NAME_skewed. It defaults
// to the subscription's ID; a join's sides are "left" and "right".
func Name(name string) Option {
	return option{name: "Name", read: true, set: func(c *config) error {
		if name == "" {
			return fmt.Errorf("the name is empty")
		}
		c.name = name
		return nil
	}}
}

// TimeAttribute names the message attribute that carries event time. Write
// sets it to the element's timestamp in epoch milliseconds. Read takes each
// message's event time from it, as epoch milliseconds or an RFC 3339 time;
// a message without the attribute, or with a value that is neither, gets
// its publish time and is counted (NAME_publish_time). The default is
// DefaultTimeAttribute.
func TimeAttribute(name string) Option {
	return option{name: "TimeAttribute", read: true, write: true, set: func(c *config) error {
		if name == "" {
			return fmt.Errorf("the time attribute name is empty")
		}
		if c.timeChosen {
			return fmt.Errorf("the event time is already given by another option; give one")
		}
		c.timeAttribute, c.timeChosen = name, true
		return nil
	}}
}

// TimeField makes Read take each message's event time from a field of its
// JSON object instead of an attribute: a dotted path ("meta.ts") to epoch
// milliseconds or an RFC 3339 string. A message whose field is missing or
// holds neither goes to the dead letters.
func TimeField(path string) Option {
	return option{name: "TimeField", read: true, set: func(c *config) error {
		if c.timeChosen {
			return fmt.Errorf("the event time is already given by another option; give one")
		}
		if path == "" {
			return fmt.Errorf("the time field path is empty")
		}
		for _, step := range strings.Split(path, ".") {
			if step == "" {
				return fmt.Errorf("the time field path %q has an empty step", path)
			}
		}
		c.timeAttribute, c.timeField, c.timeChosen = "", path, true
		return nil
	}}
}

// WatermarkLag is Read's bound on out-of-orderness: the watermark trails
// the largest event time read by d, so a message up to d older than the
// newest one read is still on time. It defaults to zero.
func WatermarkLag(d time.Duration) Option {
	return option{name: "WatermarkLag", read: true, set: func(c *config) error {
		if d < 0 || d%time.Millisecond != 0 {
			return fmt.Errorf("watermark lag %v must be a non-negative whole number of milliseconds", d)
		}
		c.lag = d
		return nil
	}}
}

// IdleAfter lets Read's watermark move on a quiet subscription: once the
// reader has spent d in pulls that came back empty since its last
// message, event time is taken to pass as fast as that quiet time from
// the largest event time read, so that event-time timers and windows
// downstream fire while nothing comes. Only time inside the reader's own
// pulls counts: a pause of its bundles (a worker restart, a rebalance, a
// restore from a checkpoint) does not. Without it the watermark moves
// only with the event times read, and a quiet stream's timers wait for
// its next message.
//
// It risks late data: an empty pull is not an empty backlog. A message
// that comes after a quiet time of more than d with an event time from
// before it (held back by a producer, published late from a backlog,
// redelivered after a failure elsewhere, delayed by an outage) can be
// behind the watermark, and a join downstream may judge it late. Give it
// only where a quiet subscription means no data is on its way, and d
// longer than any pause during which producers may still hold data.
func IdleAfter(d time.Duration) Option {
	return option{name: "IdleAfter", read: true, set: func(c *config) error {
		if d <= 0 || d%time.Millisecond != 0 {
			return fmt.Errorf("idle time %v must be a positive whole number of milliseconds", d)
		}
		c.idleAfter = d
		return nil
	}}
}

// MaxSkew bounds how far ahead Read takes a message's event time to be,
// so that one bad time (milliseconds written as microseconds, a clock
// years off, a message of a backfill that fell back to its publish time)
// does not move the watermark for good:
//   - A message whose event time is more than d after its publish time
//     is a dead letter: an event is not published before it happens.
//   - A message whose event time is more than d ahead of the latest
//     event time the reader took in is emitted with it, but does not move
//     the watermark, unless it is the last of five such messages in a
//     row: then the watermark takes the earliest of them, because the
//     stream itself has moved on (a gap in the data, a backfill that
//     reached the present).
//
// Both are counted (NAME_skewed). It is off by default; give d above the
// longest jump forward the stream makes.
func MaxSkew(d time.Duration) Option {
	return option{name: "MaxSkew", read: true, set: func(c *config) error {
		if d <= 0 || d%time.Millisecond != 0 {
			return fmt.Errorf("skew bound %v must be a positive whole number of milliseconds", d)
		}
		c.maxSkew = d
		return nil
	}}
}

// Readers makes Read pull its subscription with n readers, each a pull
// loop of its own (a restriction the runner may run on any worker), which
// the service shares the messages among. Messages come out as with one
// reader: the de-duplication after the readers drops a redelivery
// whichever reader gets it. The default is one.
//
// The read's watermark is the least of its readers'. The readers of a
// worker share the largest event time their committed bundles read, so
// one that gets no message follows the others; readers in different
// workers cannot tell each other anything, so Readers(n > 1) needs
// IdleAfter(d): a reader that has read nothing, and learned no time from
// its worker, takes the wall clock of its first empty pull less d as the
// largest time read, and moves on from there once quiet for d. That is
// right for a live stream; old data published into a read that has had
// no message since it started is late (read it with one reader, or
// publish it first). See docs/pubsub.md.
func Readers(n int) Option {
	return option{name: "Readers", read: true, set: func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%d readers: want 1 or more", n)
		}
		c.readers = n
		return nil
	}}
}

// IDAttribute makes Read de-duplicate messages by the value of the
// attribute name, which the publisher sets (`beamjoin publish` sets
// DefaultIDAttribute), instead of by message ID: two messages with the same
// value within the de-duplication window are one, even when they were
// published twice. A message without the attribute, or with an empty one,
// is de-duplicated by its message ID.
func IDAttribute(name string) Option {
	return option{name: "IDAttribute", read: true, set: func(c *config) error {
		if name == "" {
			return fmt.Errorf("the ID attribute name is empty")
		}
		c.idAttribute = name
		return nil
	}}
}

// DeduplicateFor sets Read's de-duplication window: a message's ID is
// remembered until the watermark passes the message's event time plus d,
// and a message with a remembered ID is dropped and counted
// (NAME_duplicates). It defaults to DefaultDedupWindow. The memory is
// Beam state kept by the runner: one small entry per ID read within the
// window, so about the message rate times d (see docs/pubsub.md).
func DeduplicateFor(d time.Duration) Option {
	return option{name: "DeduplicateFor", read: true, set: func(c *config) error {
		if d <= 0 || d%time.Millisecond != 0 {
			return fmt.Errorf("de-duplication window %v must be a positive whole number of milliseconds (KeepDuplicates turns de-duplication off)", d)
		}
		c.dedupWindow = d
		return nil
	}}
}

// KeepDuplicates turns Read's de-duplication off: a redelivered message is
// emitted again, and makes duplicate records downstream. It saves the
// de-duplication's state calls (a read and an append per message) where
// the pipeline tolerates duplicates or removes them itself.
func KeepDuplicates() Option {
	return option{name: "KeepDuplicates", read: true, set: func(c *config) error {
		c.dedupWindow = 0
		return nil
	}}
}

// newConfig applies opts for the transform what ("Read" or "Write").
func newConfig(what string, opts []Option) (config, error) {
	c := defaultConfig()
	for _, opt := range opts {
		if opt == nil {
			return config{}, fmt.Errorf("beamjoin: pubsubio.%s: a nil Option; make options with the package's functions", what)
		}
		o := opt.pubsubOption()
		if (what == "Read" && !o.read) || (what == "Write" && !o.write) {
			return config{}, fmt.Errorf("beamjoin: pubsubio.%s: option %s does not apply to %s", what, o.name, what)
		}
		if err := o.set(&c); err != nil {
			return config{}, fmt.Errorf("beamjoin: pubsubio.%s: %s: %w", what, o.name, err)
		}
	}
	if c.readers > 1 && c.idleAfter == 0 {
		return config{}, fmt.Errorf("beamjoin: pubsubio.%s: Readers(%d) needs IdleAfter: readers in different workers cannot tell each other what they read, so without it a reader that receives no message would hold the read's watermark where it is for good", what, c.readers)
	}
	return c, nil
}

func (o option) pubsubOption() option { return o }

var (
	subscriptionName = regexp.MustCompile(`^projects/([^/]+)/subscriptions/([^/]+)$`)
	topicName        = regexp.MustCompile(`^projects/([^/]+)/topics/([^/]+)$`)
)

// parseSubscription splits "projects/P/subscriptions/S" into P and S.
func parseSubscription(name string) (project, id string, err error) {
	m := subscriptionName.FindStringSubmatch(name)
	if m == nil {
		return "", "", fmt.Errorf("beamjoin: pubsubio.Read: subscription %q is not of the form projects/PROJECT/subscriptions/SUBSCRIPTION", name)
	}
	return m[1], m[2], nil
}

// parseTopic splits "projects/P/topics/T" into P and T.
func parseTopic(name string) (project, id string, err error) {
	m := topicName.FindStringSubmatch(name)
	if m == nil {
		return "", "", fmt.Errorf("beamjoin: pubsubio.Write: topic %q is not of the form projects/PROJECT/topics/TOPIC", name)
	}
	return m[1], m[2], nil
}
