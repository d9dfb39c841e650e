// This file holds what Read emits, Message and DeadLetter, and the plain-Go
// rules that decide which of the two a pulled message is and its event
// time.

package pubsubio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"

	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

// Message is one good message read from a subscription. Its element
// timestamp in the pipeline is its event time.
type Message struct {
	// ID is the message ID the service gave it.
	ID string
	// Data is the message's JSON object, as published.
	Data []byte
	// Attributes are the message's attributes; nil when it has none.
	Attributes map[string]string
	// PublishTime is when the service received the message, in
	// milliseconds since the Unix epoch.
	PublishTime int64
}

// DeadLetter is a message that Read could not turn into a Message, and why.
// It is acknowledged like any other message: it is not redelivered.
type DeadLetter struct {
	// Subscription is the subscription the message came from, in full
	// (projects/P/subscriptions/S).
	Subscription string
	// MessageID is the message ID the service gave it.
	MessageID string
	// PublishTime is when the service received the message, in
	// milliseconds since the Unix epoch.
	PublishTime int64
	// Error says what is wrong, naming the field when one is at fault, e.g.
	// `field "ts": missing`.
	Error string
	// Data is the message's data as received. Bytes that are not UTF-8 are
	// written as U+FFFD by JSON.
	Data string
	// Attributes are the message's attributes; nil when it has none.
	Attributes map[string]string
}

// JSON returns the dead letter as one JSON object:
// {"subscription":…,"message_id":…,"publish_time":N,"error":…,"data":…,"attributes":{…}}.
func (d DeadLetter) JSON() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// A struct of strings, an int64 and a string map always encodes.
	_ = enc.Encode(struct {
		Subscription string            `json:"subscription"`
		MessageID    string            `json:"message_id"`
		PublishTime  int64             `json:"publish_time"`
		Error        string            `json:"error"`
		Data         string            `json:"data"`
		Attributes   map[string]string `json:"attributes,omitempty"`
	}{d.Subscription, d.MessageID, d.PublishTime, d.Error, d.Data, d.Attributes})
	return strings.TrimSuffix(b.String(), "\n")
}

// String returns the dead letter in the form of an error message:
// "projects/p/subscriptions/orders message 17: not a JSON object".
func (d DeadLetter) String() string {
	return d.Subscription + " message " + d.MessageID + ": " + d.Error
}

// decoder decides whether a message is good and what its event time is.
type decoder struct {
	// TimeAttribute, when set, names the attribute holding event time.
	TimeAttribute string
	// TimeField, when set, is the dotted path of the JSON field holding
	// event time.
	TimeField string
}

// eventTime returns a good message's event time in epoch milliseconds, and
// whether that is its publish time because the time attribute is absent or
// unreadable. An error says why the message is not good.
func (d decoder) eventTime(data []byte, attrs map[string]string, publishTime int64) (ts int64, fellBack bool, err error) {
	if d.TimeField != "" {
		return d.fieldTime(data)
	}
	if c := firstByte(data); c != '{' || !json.Valid(data) {
		return 0, false, notAnObject(data)
	}
	if v, ok := attrs[d.TimeAttribute]; ok {
		if ts, err := ParseTime(v); err == nil && inRange(ts) {
			return ts, false, nil
		}
	}
	return publishTime, true, nil
}

// fieldTime reads the event time from the field TimeField of data, by
// the rules and with the errors of the JSON-lines reader (jsonl.Fields), so
// that a message and a line with the same time field read alike.
func (d decoder) fieldTime(data []byte) (int64, bool, error) {
	if c := firstByte(data); c != '{' {
		return 0, false, notAnObject(data)
	}
	ts, err := jsonl.Fields{Time: d.TimeField}.ParseTime(data)
	return ts, false, err
}

// notAnObject says why data, which is not a JSON object, is not one.
func notAnObject(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("empty message, want a JSON object")
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("bad JSON: %v", err)
	}
	return fmt.Errorf("not a JSON object")
}

func firstByte(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// ParseTime reads an event time written as an integer number of
// milliseconds since the Unix epoch ("1714554000000") or as an RFC 3339
// time ("2024-05-01T09:00:00Z", fractional seconds allowed; digits below
// the millisecond are dropped). It is how Read reads a time attribute.
func ParseTime(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if ts, ok := parseRFC3339(s); ok {
		return ts, nil
	}
	return 0, fmt.Errorf("%q is neither epoch milliseconds nor an RFC 3339 time (e.g. \"2024-05-01T12:00:00Z\")", s)
}

func parseRFC3339(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// inRange reports whether ts is a time Beam can hold (mtime.MinTimestamp
// to mtime.MaxTimestamp).
func inRange(ts int64) bool {
	return int64(mtime.MinTimestamp) <= ts && ts <= int64(mtime.MaxTimestamp)
}

// FormatTime writes an event time as Write writes it in the time
// attribute: epoch milliseconds in decimal.
func FormatTime(ms int64) string { return strconv.FormatInt(ms, 10) }
