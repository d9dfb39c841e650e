package jsonjoin_test

import (
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func TestConfigValidate(t *testing.T) {
	in := jsonjoin.Input{Pattern: "x.jsonl", Fields: jsonl.Fields{Key: "k", Time: "t"}}
	base := func(op jsonjoin.Op) jsonjoin.Config { return jsonjoin.Config{Op: op, Left: in, Right: in} }
	with := func(c jsonjoin.Config, f func(*jsonjoin.Config)) jsonjoin.Config { f(&c); return c }
	for _, tc := range []struct {
		name string
		c    jsonjoin.Config
		err  string
	}{
		{"interval", with(base(jsonjoin.Interval), func(c *jsonjoin.Config) { c.Upper = time.Minute }), ""},
		{"fixed_windows", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Hour }), ""},
		{"sessions", with(base(jsonjoin.CoGroup), func(c *jsonjoin.Config) { c.Gap = time.Minute }), ""},
		{"unknown_op", base("merge"), `beamjoin: unknown operation "merge" (want interval, window, cogroup, asof or multi)`},
		{"no_right", with(base(jsonjoin.Interval), func(c *jsonjoin.Config) { c.Right = jsonjoin.Input{} }), "beamjoin: no right input"},
		{"bad_path", with(base(jsonjoin.Interval), func(c *jsonjoin.Config) { c.Left.Fields.Key = "a." }), `beamjoin: left input: the key field path "a." has an empty step`},
		{"interval_with_window", with(base(jsonjoin.Interval), func(c *jsonjoin.Config) { c.Size = time.Hour }), "beamjoin: an interval join takes no window"},
		{"window_with_late", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Hour; c.Late = "l"; c.AllowedLateness = time.Minute }), ""},
		{"cogroup_with_buffer_cap", with(base(jsonjoin.CoGroup), func(c *jsonjoin.Config) { c.Size = time.Hour; c.MaxBufferedPerKey = 3 }), "beamjoin: cogroup takes no buffer cap"},
		{"interval_unique_left", with(base(jsonjoin.Interval), func(c *jsonjoin.Config) { c.Upper = time.Minute; c.UniqueLeft = true }), ""},
		{"window_unique_left", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Hour; c.UniqueLeft = true }),
			"beamjoin: window takes no unique-left declaration: it is the interval join's"},
		{"unique_left_with_buffer_cap", with(base(jsonjoin.Interval), func(c *jsonjoin.Config) { c.Upper = time.Minute; c.UniqueLeft = true; c.MaxBufferedPerKey = 3 }),
			"beamjoin: join.Interval: UniqueLeft cannot be combined with MaxBufferedPerKey(3): the cap counts buffered elements, and UniqueLeft buffers fewer, so the cap would evict other ones"},
		{"window_with_negative_lateness", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Hour; c.AllowedLateness = -time.Second }),
			"beamjoin: join.Window: allowed lateness -1s is negative"},
		{"window_with_bounds", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Hour; c.Upper = 1 }), "beamjoin: window takes no interval bounds"},
		{"window_with_emit", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Hour; c.Emit = join.EmitFinal }), "beamjoin: window takes no emission mode: results come when a window closes"},
		{"cogroup_with_type", with(base(jsonjoin.CoGroup), func(c *jsonjoin.Config) { c.Size = time.Hour; c.Type = join.FullOuter }), "beamjoin: cogroup takes no join type: every group is reported"},
		{"no_size", base(jsonjoin.Window), "beamjoin: join.Window: WindowInto(window.NewFixedWindows(0s)): the size 0s is not positive"},
		{"lower_above_upper", with(base(jsonjoin.Interval), func(c *jsonjoin.Config) { c.Lower = time.Hour }), "beamjoin: lower bound 1h0m0s is greater than upper bound 0s"},
		{"gap_and_size", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Hour; c.Gap = time.Minute }), "beamjoin: session windows (gap 1m0s) take no size or slide"},
		{"slide_over_size", with(base(jsonjoin.Window), func(c *jsonjoin.Config) { c.Size = time.Minute; c.Slide = time.Hour }), "beamjoin: join.Window: WindowInto(window.NewSlidingWindows(1h0m0s, 1m0s)): the period 1h0m0s is greater than the size 1m0s: an element between two windows would be in none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Fatalf("Validate() = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	rec := func(raw string) *jsonl.Record { return &jsonl.Record{Raw: []byte(raw)} }
	ms := time.UnixMilli
	for _, tc := range []struct {
		name, got, want string
	}{
		{"pair", jsonjoin.FormatResult(jsonjoin.Result{Kind: join.KindPair, Key: `"k"`, Left: rec(`{"a":1}`), Right: rec(`{"b":"<&>"}`),
			LeftTime: ms(1), RightTime: ms(2), Time: ms(2)}),
			`{"kind":"pair","key":"k","left":{"a":1},"right":{"b":"<&>"},"left_time":1,"right_time":2,"time":2}`},
		{"unmatched_right", jsonjoin.FormatResult(jsonjoin.Result{Kind: join.KindUnmatched, Key: `7`, Right: rec(`{ "b" : 2 }`), RightTime: ms(5), Time: ms(5)}),
			`{"kind":"unmatched","key":7,"left":null,"right":{ "b" : 2 },"left_time":null,"right_time":5,"time":5}`},
		{"retract", jsonjoin.FormatResult(jsonjoin.Result{Kind: join.KindRetract, Key: `"k"`, Left: rec(`{}`), LeftTime: ms(-3), Time: ms(-3)}),
			`{"kind":"retract","key":"k","left":{},"right":null,"left_time":-3,"right_time":null,"time":-3}`},
		{"window", jsonjoin.FormatWindowResult(jsonjoin.WindowResult{Kind: join.KindPair, Key: `"k"`, Left: rec(`{}`), Right: rec(`[]`),
			LeftTime: ms(1), RightTime: ms(2), Time: ms(59999), WindowStart: ms(0), WindowEnd: ms(60000)}),
			`{"kind":"pair","key":"k","left":{},"right":[],"left_time":1,"right_time":2,"time":59999,"window":{"start":0,"end":60000}}`},
		{"group_in_input_order", jsonjoin.FormatGroup(jsonjoin.Group{Key: `"k"`,
			Left:  []jsonl.Record{{File: "b", Line: 1, Raw: []byte(`3`)}, {File: "a", Line: 9, Raw: []byte(`2`)}, {File: "a", Line: 2, Raw: []byte(`1`)}},
			Right: nil, WindowStart: ms(0), WindowEnd: ms(10)}),
			`{"kind":"group","key":"k","left":[1,2,3],"right":[],"time":9,"window":{"start":0,"end":10}}`},
		{"group_ties_by_object", jsonjoin.FormatGroup(jsonjoin.Group{Key: `"k"`,
			Left:  []jsonl.Record{{File: "p", Line: 5, Raw: []byte(`{"b":2}`)}, {File: "p", Line: 5, Raw: []byte(`{"a":1}`)}},
			Right: []jsonl.Record{{File: "p", Line: 5, Raw: []byte(`{"a":1}`)}, {File: "p", Line: 5, Raw: []byte(`{"b":2}`)}}, WindowStart: ms(0), WindowEnd: ms(10)}),
			`{"kind":"group","key":"k","left":[{"a":1},{"b":2}],"right":[{"a":1},{"b":2}],"time":9,"window":{"start":0,"end":10}}`},
		{"late", jsonjoin.FormatLate(jsonjoin.LateElement{Side: join.Right, Key: `"k"`, Time: ms(4), Right: rec(`{"r":1}`)}),
			`{"side":"right","key":"k","time":4,"value":{"r":1}}`},
		{"window_late", jsonjoin.FormatWindowLate(jsonjoin.WindowLateElement{Side: join.Left, Key: `"k"`, Time: ms(4), Left: rec(`{"l":1}`), WindowStart: ms(0), WindowEnd: ms(10)}),
			`{"side":"left","key":"k","time":4,"value":{"l":1},"window":{"start":0,"end":10}}`},
		{"dead_letter", jsonjoin.FormatDeadLetter(jsonl.DeadLetter{File: "o.jsonl", Line: 3, Error: `field "ts": missing`, Raw: `{"a":"<"}`}),
			`{"file":"o.jsonl","line":3,"error":"field \"ts\": missing","raw":"{\"a\":\"<\"}"}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}
