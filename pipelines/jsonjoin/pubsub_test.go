package jsonjoin_test

import (
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

// TestPubSubConfig checks what Validate and CheckFiles say of Pub/Sub
// names: subscriptions in, topics out, attributes only for subscriptions,
// and no file output for a join that reads a stream.
func TestPubSubConfig(t *testing.T) {
	fields := jsonl.Fields{Key: "k", Time: "t"}
	const (
		sub   = "pubsub:projects/p/subscriptions/s"
		topic = "pubsub:projects/p/topics/t"
	)
	base := jsonjoin.Config{Op: jsonjoin.Interval, Upper: time.Minute,
		Left: jsonjoin.Input{Pattern: sub, Fields: fields}, Right: jsonjoin.Input{Pattern: sub, Fields: fields}, Out: topic}
	with := func(f func(*jsonjoin.Config)) jsonjoin.Config { c := base; f(&c); return c }
	for _, tc := range []struct {
		name      string
		c         jsonjoin.Config
		streaming bool
		want      string // the error, "" for none
	}{
		{"streams_to_topic", base, true, ""},
		{"time_attribute", with(func(c *jsonjoin.Config) { c.Right.Fields.Time = "attribute:event_time" }), true, ""},
		{"late_and_dead_letters_to_topics", with(func(c *jsonjoin.Config) { c.Late, c.DeadLetter = topic, topic }), true, ""},
		{"files_to_topic", with(func(c *jsonjoin.Config) { c.Left.Pattern, c.Right.Pattern = "l.jsonl", "r.jsonl" }), false, ""},
		{"input_topic", with(func(c *jsonjoin.Config) { c.Left.Pattern = "pubsub:projects/p/topics/t" }), true,
			`beamjoin: left input "pubsub:projects/p/topics/t": a Pub/Sub input is a subscription, pubsub:projects/PROJECT/subscriptions/SUBSCRIPTION`},
		{"output_subscription", with(func(c *jsonjoin.Config) { c.Late = sub }), true,
			`beamjoin: late elements "pubsub:projects/p/subscriptions/s": a Pub/Sub output is a topic, pubsub:projects/PROJECT/topics/TOPIC`},
		{"stream_to_stdout", with(func(c *jsonjoin.Config) { c.Out = "" }), true,
			`beamjoin: results "-": a join that reads Pub/Sub runs until it is stopped, and files and standard output are written when a join ends; give a topic, pubsub:projects/PROJECT/topics/TOPIC`},
		{"stream_to_file", with(func(c *jsonjoin.Config) { c.Right.Pattern = "r.jsonl"; c.DeadLetter = "bad.jsonl" }), true,
			`beamjoin: dead letters "bad.jsonl": a join that reads Pub/Sub runs until it is stopped, and files and standard output are written when a join ends; give a topic, pubsub:projects/PROJECT/topics/TOPIC`},
		{"idle_after", with(func(c *jsonjoin.Config) { c.IdleAfter = 500 * time.Millisecond }), true, ""},
		{"idle_after_negative", with(func(c *jsonjoin.Config) { c.IdleAfter = -time.Second }), true,
			`beamjoin: idle time -1s: want a positive whole number of milliseconds`},
		{"idle_after_finer_than_ms", with(func(c *jsonjoin.Config) { c.IdleAfter = 1500 * time.Microsecond }), true,
			`beamjoin: idle time 1.5ms: want a positive whole number of milliseconds`},
		{"idle_after_for_files", with(func(c *jsonjoin.Config) {
			c.Left.Pattern, c.Right.Pattern, c.IdleAfter = "l.jsonl", "r.jsonl", time.Minute
		}), false, `beamjoin: idle time 1m0s: only a Pub/Sub input goes idle; files are read to their end`},
		{"max_skew_of_a_stream", with(func(c *jsonjoin.Config) { c.MaxSkew = time.Hour }), true, ""},
		{"max_skew_of_a_replay", with(func(c *jsonjoin.Config) {
			c.Left.Pattern, c.Right.Pattern, c.Replay, c.MaxSkew = "l.jsonl", "r.jsonl", true, time.Hour
		}), false, ""},
		{"max_skew_of_files_read_whole", with(func(c *jsonjoin.Config) {
			c.Left.Pattern, c.Right.Pattern, c.MaxSkew = "l.jsonl", "r.jsonl", time.Hour
		}), false, `beamjoin: skew bound 1h0m0s: only a replay or a Pub/Sub input has a watermark for it to guard; files read whole move event time only at their end`},
		{"max_skew_negative", with(func(c *jsonjoin.Config) { c.MaxSkew = -time.Second }), true,
			`beamjoin: skew bound -1s: want a positive whole number of milliseconds`},
		{"attribute_of_a_file", with(func(c *jsonjoin.Config) { c.Left.Pattern = "l.jsonl"; c.Left.Fields.Time = "attribute:ts" }), true,
			`beamjoin: left input: time "attribute:ts" is a message attribute, and only Pub/Sub inputs have attributes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Streaming(); got != tc.streaming {
				t.Errorf("Streaming() = %v, want %v", got, tc.streaming)
			}
			err := tc.c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
			if tc.want == "" && tc.c.Streaming() {
				// No file of it is checked: all are Pub/Sub names.
				if err := tc.c.CheckFiles(jsonjoin.InProcess); err != nil {
					t.Errorf("CheckFiles: %v", err)
				}
			}
		})
	}
}
