package asof

// This file holds the engine's configuration and Build, which adds its
// streaming or its bounded path to a pipeline.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bounded"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// Config is an as-of join's configuration, which package join makes of
// its options.
type Config struct {
	Rules Rules
	// Bounded takes the bounded path (join.Bounded, or bounded inputs).
	Bounded bool
	// GatherBytes and Shards, for tests, set the bounded path's gatherers'
	// hold and shards of keys (0: bounded.DefaultHold and
	// bounded.DefaultShards).
	GatherBytes, Shards int
}

// Build adds the as-of join op to s: sides, each side's tagged
// PCollection<KV<K, raw.Encoded>> in the global window, become its raw
// records, a PCollection<KV<K, raw.Record>>, and its late elements, a
// PCollection<KV<K, raw.Encoded>>. key is the coder of K.
func Build(s beam.Scope, op string, cfg Config, key coders.Element, sides [2]beam.PCollection) (records, late beam.PCollection, err error) {
	if cfg.Bounded {
		return buildBounded(s.Scope("bounded"), op, cfg, key, sides)
	}
	tagged, err := raw.Flatten(s, op, sides)
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	records, late = beam.ParDo2(s, NewFn(cfg.Rules), tagged)
	return records, late, nil
}

// NewFn is the streaming path's stateful DoFn under rules r.
func NewFn(r Rules) *asofFn {
	return &asofFn{Rules: r, State: state.MakeBagState[[]byte]("asof"), Timer: timers.InEventTime("asof")}
}

// buildBounded is the bounded path: sides, each side's tagged
// PCollection<KV<K, raw.Encoded>>, become the join's records and its
// (empty) late elements, the PCollections the streaming path's DoFn
// produces. key is the coder of K; op names the join in errors.
func buildBounded(s beam.Scope, op string, cfg Config, key coders.Element, sides [2]beam.PCollection) (records, late beam.PCollection, err error) {
	// One bucket: a key's versions may be at any time before its left
	// elements.
	gathered, err := bounded.Gather(s, op, sides, bounded.Gathering{Key: key, Hold: cfg.GatherBytes, Shards: cfg.Shards})
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	fn := &asofSweepFn{Rules: cfg.Rules, Key: key}
	fn.Groups, fn.Release = bounded.NewState()
	keyType := beam.TypeDefinition{Var: beam.XType, T: sides[match.Left].Type().Components()[0].Type()}
	records, late = beam.ParDo2(s, fn, gathered, keyType)
	return records, late, nil
}
