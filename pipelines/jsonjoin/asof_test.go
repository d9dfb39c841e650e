package jsonjoin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// TestRunAsOfPricesOrders runs the as-of join of the pricing sample
// (testdata/pricing: orders, and currency rates valid from their time),
// left outer, on files read whole (the bounded path) and replayed with a
// 10 s watermark lag (state and timers), and checks both write exactly the
// records worked out by hand from the rule: each order with the rate of its
// currency of the greatest time at or before the order's (o2 at a rate's
// own time takes it; o4 takes the greater of two EUR rates at 5000, 0.93,
// though 0.92 comes later in the file), and o1 (before any EUR rate) and o7
// (no JPY rate) unmatched.
func TestRunAsOfPricesOrders(t *testing.T) {
	rate := map[string]string{
		"EUR1000": `{"currency":"EUR","ts":1000,"per_usd":0.90}`,
		"EUR5000": `{"currency":"EUR","ts":5000,"per_usd":0.93}`,
		"EUR9000": `{"currency":"EUR","ts":9000,"per_usd":0.95}`,
		"GBP2000": `{"currency":"GBP","ts":2000,"per_usd":0.80}`,
		"GBP8000": `{"currency":"GBP","ts":8000,"per_usd":0.78}`,
	}
	order := func(id, cur string, ts, usd int) string {
		return `{"order_id":"` + id + `","currency":"` + cur + `","ts":` + strconv.Itoa(ts) + `,"usd":` + strconv.Itoa(usd) + `}`
	}
	pair := func(cur, o, r string, lt, rt int) string {
		return `{"kind":"pair","key":"` + cur + `","left":` + o + `,"right":` + r + `,"left_time":` + strconv.Itoa(lt) + `,"right_time":` + strconv.Itoa(rt) + `,"time":` + strconv.Itoa(lt) + `}`
	}
	unmatched := func(cur, o string, lt int) string {
		return `{"kind":"unmatched","key":"` + cur + `","left":` + o + `,"right":null,"left_time":` + strconv.Itoa(lt) + `,"right_time":null,"time":` + strconv.Itoa(lt) + `}`
	}
	// In the order the command writes them: sorted, digit runs by value.
	want := []string{
		pair("EUR", order("o2", "EUR", 1000, 200), rate["EUR1000"], 1000, 1000),
		pair("EUR", order("o3", "EUR", 4999, 300), rate["EUR1000"], 4999, 1000),
		pair("EUR", order("o4", "EUR", 5000, 400), rate["EUR5000"], 5000, 5000),
		pair("EUR", order("o8", "EUR", 12000, 800), rate["EUR9000"], 12000, 9000),
		pair("GBP", order("o5", "GBP", 7000, 500), rate["GBP2000"], 7000, 2000),
		pair("GBP", order("o6", "GBP", 9000, 600), rate["GBP8000"], 9000, 8000),
		unmatched("EUR", order("o1", "EUR", 500, 100), 500),
		unmatched("JPY", order("o7", "JPY", 3000, 700), 3000),
	}
	for _, path := range []string{"bounded", "replay"} {
		t.Run(path, func(t *testing.T) {
			dir := t.TempDir()
			fields := jsonl.Fields{Key: "currency", Time: "ts"}
			c := jsonjoin.Config{
				Op:    jsonjoin.AsOf,
				Left:  jsonjoin.Input{Pattern: "../../testdata/pricing/orders.jsonl", Fields: fields},
				Right: jsonjoin.Input{Pattern: "../../testdata/pricing/rates.jsonl", Fields: fields},
				Type:  join.LeftOuter,
				Out:   filepath.Join(dir, "out.jsonl"),
			}
			if path == "replay" {
				c.Replay, c.WatermarkLag = true, 10*time.Second
			}
			sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
			if err != nil {
				t.Fatal(err)
			}
			out, err := os.ReadFile(c.Out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			wantCounts := map[string]int64{"left_read": 8, "left_in": 8, "right_read": 6, "right_in": 6, "pairs_out": 6, "left_unmatched_out": 2}
			if diff := cmp.Diff(wantCounts, sum.Counts); diff != "" {
				t.Errorf("summary counts (-want +got):\n%s", diff)
			}
			if err := sum.Check(); err != nil {
				t.Errorf("Check() = %v", err)
			}
		})
	}
}

// TestAsOfConfigRejectsOtherJoinsSettings checks that Validate names the
// Config field of a setting an as-of join does not take, and the as-of
// settings given to another join.
func TestAsOfConfigRejectsOtherJoinsSettings(t *testing.T) {
	fields := jsonl.Fields{Key: "k", Time: "t"}
	base := jsonjoin.Config{Op: jsonjoin.AsOf, Left: jsonjoin.Input{Pattern: "l", Fields: fields}, Right: jsonjoin.Input{Pattern: "r", Fields: fields}}
	for _, tc := range []struct {
		name  string
		edit  func(*jsonjoin.Config)
		field string
	}{
		{"window", func(c *jsonjoin.Config) { c.Size = time.Hour }, "Size"},
		{"bounds", func(c *jsonjoin.Config) { c.Upper = time.Minute }, "Lower"},
		{"buffer_cap", func(c *jsonjoin.Config) { c.MaxBufferedPerKey = 3 }, "MaxBufferedPerKey"},
		{"allowed_lateness", func(c *jsonjoin.Config) { c.AllowedLateness = time.Minute }, "AllowedLateness"},
		{"max_age_without_limit", func(c *jsonjoin.Config) { c.MaxAge = time.Minute }, "MaxAge"},
		{"max_age_on_interval", func(c *jsonjoin.Config) { c.Op, c.Upper, c.LimitAge = jsonjoin.Interval, time.Minute, true }, "MaxAge"},
		{"strict_on_window", func(c *jsonjoin.Config) { c.Op, c.Size, c.Strict = jsonjoin.Window, time.Hour, true }, "Strict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			err := c.Validate()
			var fe *jsonjoin.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("Validate() = %v, want a FieldError of %s", err, tc.field)
			}
		})
	}
	c := base
	c.Type = join.RightOuter
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "Inner or LeftOuter") {
		t.Errorf("Validate() of a right outer as-of join = %v, want the join's error naming Inner or LeftOuter", err)
	}
	c = base
	c.LimitAge, c.MaxAge, c.Strict, c.Emit, c.Type = true, time.Minute, true, join.EmitRetract, join.LeftOuter
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() of max age 1m, strict, retract, left outer = %v, want nil", err)
	}
}
