package pubsubio_test

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// order is a record that Write encodes with encoding/json.
type order struct {
	OrderID string  `json:"order_id"`
	Amount  float64 `json:"amount"`
	At      int64   `json:"-"`
}

// stampLine gives a "MILLIS JSON" line the timestamp MILLIS and emits the
// JSON.
func stampLine(line string, emit func(beam.EventTime, string)) {
	var ms int64
	i := strings.IndexByte(line, ' ')
	fmt.Sscan(line[:i], &ms)
	emit(mtime.Time(ms), line[i+1:])
}

// stampOrder gives an order the timestamp of its At.
func stampOrder(o order, emit func(beam.EventTime, order)) { emit(mtime.Time(o.At), o) }

func init() {
	beam.RegisterType(reflect.TypeOf((*order)(nil)).Elem())
	register.Function2x0(stampLine)
	register.Function2x0(stampOrder)
	register.Emitter2[beam.EventTime, string]()
	register.Emitter2[beam.EventTime, order]()
}

// publishedOf returns the messages of topic as "ATTRIBUTES DATA", sorted.
func publishedOf(f *fake, topic string) []string {
	var out []string
	for _, m := range f.messagesOf(topic) {
		var attrs []string
		for k, v := range m.Attributes {
			attrs = append(attrs, k+"="+v)
		}
		sort.Strings(attrs)
		out = append(out, strings.Join(attrs, ",")+" "+string(m.Data))
	}
	sort.Strings(out)
	return out
}

// Write publishes JSON text as it is and other records as encoding/json
// writes them, each with its event time in the time attribute.
func TestWrite(t *testing.T) {
	f := newFake(t, t.Name())
	lines := f.topic(t, "lines")
	orders := f.topic(t, "orders")

	p, s := beam.NewPipelineWithRoot()
	text := beam.ParDo(s, stampLine, beam.Create(s,
		`1714554000000 {"kind":"pair","key":"o-1"}`,
		`1714554001500 {"kind":"unmatched","key":"o-2"}`,
		`-5 [1,"two",null]`))
	pubsubio.Write(s, lines, text)
	records := beam.ParDo(s, stampOrder, beam.Create(s,
		order{OrderID: "o-1", Amount: 10.5, At: 1714554000000},
		order{OrderID: "o-<2>", Amount: 20, At: 1714554002000}))
	pubsubio.Write(s, orders, records, pubsubio.TimeAttribute("ts"))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}

	want := []string{
		`event_time=-5 [1,"two",null]`,
		`event_time=1714554000000 {"kind":"pair","key":"o-1"}`,
		`event_time=1714554001500 {"kind":"unmatched","key":"o-2"}`,
	}
	if diff := cmp.Diff(want, publishedOf(f, lines)); diff != "" {
		t.Errorf("lines topic (-want +got):\n%s", diff)
	}
	want = []string{
		`ts=1714554000000 {"order_id":"o-1","amount":10.5}`,
		`ts=1714554002000 {"order_id":"o-<2>","amount":20}`,
	}
	if diff := cmp.Diff(want, publishedOf(f, orders)); diff != "" {
		t.Errorf("orders topic (-want +got):\n%s", diff)
	}
}

// A message that cannot be published fails the pipeline, with an error
// that names the topic; so does an element that is not JSON text.
func TestWriteFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		topic   string // created unless it is "missing"
		line    string
		wantErr string
	}{
		{"missing_topic", "missing", `1 {"a":1}`, "messages to projects/test/topics/missing were not published"},
		{"not_json", "lines", `1 {"a":`, "pubsubio.Write to projects/test/topics/lines: the element with event time 1: not valid JSON text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, t.Name())
			topic := "projects/test/topics/" + tc.topic
			if tc.topic != "missing" {
				f.topic(t, tc.topic)
			}
			p, s := beam.NewPipelineWithRoot()
			pubsubio.Write(s, topic, beam.ParDo(s, stampLine, beam.Create(s, tc.line)))
			err := ptest.Run(p)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
			if got := f.messagesOf(topic); len(got) != 0 {
				t.Errorf("%d messages published, want none", len(got))
			}
		})
	}
}

// Read and Write refuse bad names and options at construction.
func TestConstructionErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   func(s beam.Scope) error
		wantErr string
	}{
		{"read_short_name", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "orders")
			return err
		}, `subscription "orders" is not of the form projects/PROJECT/subscriptions/SUBSCRIPTION`},
		{"read_topic_name", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/topics/orders")
			return err
		}, `is not of the form projects/PROJECT/subscriptions/SUBSCRIPTION`},
		{"write_subscription_name", func(s beam.Scope) error {
			return pubsubio.TryWrite(s, "projects/p/subscriptions/s", beam.Create(s, "{}"))
		}, `topic "projects/p/subscriptions/s" is not of the form projects/PROJECT/topics/TOPIC`},
		{"two_times", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/subscriptions/s", pubsubio.TimeAttribute("ts"), pubsubio.TimeField("ts"))
			return err
		}, "pubsubio.Read: TimeField: the event time is already given by another option"},
		{"negative_lag", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/subscriptions/s", pubsubio.WatermarkLag(-1))
			return err
		}, "WatermarkLag: watermark lag -1ns must be a non-negative whole number of milliseconds"},
		{"zero_idle", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/subscriptions/s", pubsubio.IdleAfter(0))
			return err
		}, "IdleAfter: idle time 0s must be a positive whole number of milliseconds"},
		{"no_readers", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/subscriptions/s", pubsubio.Readers(0))
			return err
		}, "pubsubio.Read: Readers: 0 readers: want 1 or more"},
		{"several_readers_without_idle_after", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/subscriptions/s", pubsubio.Readers(3))
			return err
		}, "pubsubio.Read: Readers(3) needs IdleAfter: readers in different workers cannot tell each other what they read"},
		{"zero_skew", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/subscriptions/s", pubsubio.MaxSkew(0))
			return err
		}, "pubsubio.Read: MaxSkew: skew bound 0s must be a positive whole number of milliseconds"},
		{"read_option_to_write", func(s beam.Scope) error {
			return pubsubio.TryWrite(s, "projects/p/topics/t", beam.Create(s, "{}"), pubsubio.WatermarkLag(0))
		}, "pubsubio.Write: option WatermarkLag does not apply to Write"},
		{"nil_option", func(s beam.Scope) error {
			_, _, err := pubsubio.TryRead(s, "projects/p/subscriptions/s", nil)
			return err
		}, "a nil Option"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			err := tc.build(s)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
