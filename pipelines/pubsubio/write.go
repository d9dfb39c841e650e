// This file holds Write: records published as JSON, with their event time
// as an attribute, and every publish result awaited before a bundle ends.

package pubsubio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"cloud.google.com/go/pubsub/v2"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn3x1[context.Context, beam.EventTime, beam.T, error](&writeFn{})
}

// maxUnconfirmed is how many publishes a bundle may have in flight before
// it waits for their results, bounding the memory they hold.
const maxUnconfirmed = 10000

// Write publishes each element of col to topic ("projects/P/topics/T") as
// one JSON message, with the element's event time in epoch milliseconds in
// the attribute DefaultTimeAttribute (or the one TimeAttribute names). A
// string or []byte element is taken to be JSON text already and must be
// valid JSON; any other element is encoded with encoding/json, without
// escaping HTML characters. Messages are
// batched as the client library does; a bundle ends only once every one of
// its messages is published, and any failure fails the bundle, so that the
// runner retries it: a message may be published twice, never lost. Write
// panics if the topic name or an option is invalid; TryWrite returns the
// error.
//
//	pubsubio.Write(s, "projects/shop/topics/unpaid", lines)
func Write(s beam.Scope, topic string, col beam.PCollection, opts ...Option) {
	if err := TryWrite(s, topic, col, opts...); err != nil {
		panic(err)
	}
}

// TryWrite is Write returning an error instead of panicking.
func TryWrite(s beam.Scope, topic string, col beam.PCollection, opts ...Option) error {
	project, _, err := parseTopic(topic)
	if err != nil {
		return err
	}
	c, err := newConfig("Write", opts)
	if err != nil {
		return err
	}
	s = s.Scope("pubsubio.Write")
	beam.ParDo0(s, &writeFn{Topic: topic, Project: project, TimeAttribute: c.timeAttribute}, col)
	return nil
}

// writeFn publishes elements and, in FinishBundle, waits for every result.
type writeFn struct {
	Topic         string
	Project       string
	TimeAttribute string

	publisher *pubsub.Publisher
	pending   []*pubsub.PublishResult
}

func (f *writeFn) Setup() error {
	c, err := clientFor(f.Project)
	if err != nil {
		return err
	}
	f.publisher = c.Publisher(f.Topic)
	return nil
}

func (f *writeFn) ProcessElement(ctx context.Context, et beam.EventTime, v beam.T) error {
	data, err := encode(v)
	if err != nil {
		return fmt.Errorf("beamjoin: pubsubio.Write to %s: the element with event time %d: %w", f.Topic, et.Milliseconds(), err)
	}
	f.pending = append(f.pending, f.publisher.Publish(ctx, &pubsub.Message{
		Data:       data,
		Attributes: map[string]string{f.TimeAttribute: FormatTime(et.Milliseconds())},
	}))
	if len(f.pending) >= maxUnconfirmed {
		return f.confirm(ctx)
	}
	return nil
}

func (f *writeFn) FinishBundle(ctx context.Context) error { return f.confirm(ctx) }

func (f *writeFn) Teardown() {
	if f.publisher != nil {
		f.publisher.Stop()
	}
}

// confirm waits until every pending message is published, and reports the
// failures.
func (f *writeFn) confirm(ctx context.Context) error {
	f.publisher.Flush()
	var first error
	failed := 0
	for _, r := range f.pending {
		if _, err := r.Get(ctx); err != nil {
			if first == nil {
				first = err
			}
			failed++
		}
	}
	n := len(f.pending)
	f.pending = f.pending[:0]
	if first != nil {
		return fmt.Errorf("beamjoin: pubsubio.Write: %d of %d messages to %s were not published: %w", failed, n, f.Topic, first)
	}
	return nil
}

// encode returns v as JSON text.
func encode(v any) ([]byte, error) {
	var data []byte
	switch x := v.(type) {
	case string:
		data = []byte(x)
	case []byte:
		data = x
	default:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
	}
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON text")
	}
	return data, nil
}
