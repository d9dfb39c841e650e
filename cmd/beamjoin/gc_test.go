package main

import (
	"testing"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
)

// TestCollectsSooner: only a join of files read whole runs the collector
// sooner than Go's default; a replay and a Pub/Sub stream keep it.
func TestCollectsSooner(t *testing.T) {
	files := jsonjoin.Config{Op: jsonjoin.Interval,
		Left: jsonjoin.Input{Pattern: "left.jsonl"}, Right: jsonjoin.Input{Pattern: "right.jsonl"}}
	replay := files
	replay.Replay = true
	stream := files
	stream.Right.Pattern = jsonjoin.PubSub + "projects/p/subscriptions/s"
	for _, tc := range []struct {
		name string
		c    jsonjoin.Config
		want bool
	}{{"files read whole", files, true}, {"replay", replay, false}, {"Pub/Sub", stream, false}} {
		if got := collectsSooner(tc.c); got != tc.want {
			t.Errorf("%s: collectsSooner = %v, want %v", tc.name, got, tc.want)
		}
	}
}
