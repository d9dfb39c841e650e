package interval

// This file holds the engine's configuration and Build, which adds one of
// its layouts to a pipeline: the default (bag) layout, the split layout or
// the bounded path; and the constructors of the stateful DoFns, which
// package join's runner-model harness builds as Build does.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// Config is an interval join's configuration, which package join makes of
// its options. Durations are in milliseconds; a zero that says "the
// default" is resolved here, by the rules the options' documentation
// gives.
type Config struct {
	Rules        match.Rules
	MaxBuffered  int   // MaxBufferedPerKey; 0: no cap
	CleanupEvery int64 // CleanupEvery, or its default
	Horizon      int64 // ProgressHorizon
	// Split takes the split layout (SplitKeys, HotKeyBuckets), in buckets
	// of SplitWidth (0: the larger of CleanupEvery and the bounds' span).
	Split      bool
	SplitWidth int64
	// Bounded takes the bounded path (Bounded, or bounded inputs), in
	// buckets of BucketWidth (BoundedBucket; 0: the default).
	Bounded     bool
	BucketWidth int64
	// CacheBytes bounds the bundle caches (BundleCacheBytes; 0:
	// DefaultCacheBytes); NoCache turns them off (tests, benchmarks).
	CacheBytes int64
	NoCache    bool
	// NoAppendCleanup makes every cleanup firing read and rewrite its
	// key's state (tests, benchmarks).
	NoAppendCleanup bool
	// NoWriteBehind makes every append to a key's bag a state call of its
	// own, as before write-behind (tests, benchmarks).
	NoWriteBehind bool
	Fates         bool // TrackFates
	UniqueLeft    bool // UniqueLeft
	// HotAfter is how many buffered elements make a key of the default
	// layout hot (HotKeyThreshold; 0: detection off): from then on its
	// later elements take the split layout, in buckets of SplitWidth
	// (hot.go).
	HotAfter int
	// GatherBytes and Shards, for tests, set the bounded path's gatherers'
	// hold and shards of keys (0: the defaults of package bounded).
	GatherBytes, Shards int
}

// Build adds the interval join op to s: sides, each side's tagged
// PCollection<KV<K, raw.Encoded>> in the global window, become its raw
// records, a PCollection<KV<K, raw.Record>>, its late elements, a
// PCollection<KV<K, raw.Encoded>>, and, with Fates, its fates, a
// PCollection<KV<K, raw.FateRecord>> (else the zero PCollection). key is
// the coder of K.
func Build(s beam.Scope, op string, cfg Config, key coders.Element, sides [2]beam.PCollection) (records, late, fates beam.PCollection, err error) {
	switch {
	case cfg.Bounded: // the bounded path flattens its gathered sides
		if records, late, err = buildBounded(s.Scope("bounded"), op, cfg, key, sides); err != nil {
			return beam.PCollection{}, beam.PCollection{}, beam.PCollection{}, err
		}
	default:
		tagged, err := raw.Flatten(s, op, sides)
		if err != nil {
			return beam.PCollection{}, beam.PCollection{}, beam.PCollection{}, err
		}
		switch {
		case cfg.Split:
			records, late = buildSplit(s.Scope("split"), cfg, key, tagged)
		case cfg.HotAfter > 0:
			records, late = buildHot(s, cfg, key, tagged)
		default:
			records, late = beam.ParDo2(s, NewFn(cfg, key, nil), tagged)
		}
	}
	if cfg.Fates {
		records, fates = beam.ParDo2(s.Scope("fates"), splitFatesFn{}, records)
	}
	return records, late, fates, nil
}

// NewFn is the default layout's stateful DoFn of a join with config cfg
// and key coder key, its bundle cache in budget (nil: this process's).
func NewFn(cfg Config, key coders.Element, budget *CacheBudget) *intervalFn {
	j := joiner{
		Rules:         cfg.Rules,
		MaxBuffered:   cfg.MaxBuffered,
		CleanupEvery:  cfg.CleanupEvery,
		Key:           key,
		NoCache:       cfg.NoCache,
		NoWriteBehind: cfg.NoWriteBehind,
		Horizon:       cfg.Horizon,
		CacheBytes:    cfg.CacheBytes,
		Fates:         cfg.Fates,
		UniqueLeft:    cfg.UniqueLeft,
	}
	j.AppendCleanup = !cfg.NoAppendCleanup && appendable(j.Rules)
	j.cache.budget = budget
	return statefulFn(j)
}

// statefulFn is the default layout's stateful DoFn of j.
func statefulFn(j joiner) *intervalFn {
	return &intervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup")}
}

// NewHotFns are the stateful DoFns of the default layout with hot-key
// detection (cfg.HotAfter): the per-key DoFn, and the split layout's
// second stage, which takes a hot key's pieces; their bundle caches in
// budget (nil: this process's).
func NewHotFns(cfg Config, key coders.Element, budget *CacheBudget) (*hotFn, *bucketFn) {
	spread, bucket := NewSplitFns(cfg, key, budget)
	fn := NewFn(cfg, key, budget)
	return &hotFn{Join: fn.Join, Spread: spread.Spread, HotAfter: cfg.HotAfter,
		Buffer: fn.Buffer, Ticks: spread.Ticks, Cleanup: fn.Cleanup}, bucket
}

// buildHot is the default layout with hot-key detection: tagged, the
// PCollection<KV<K, raw.Encoded>> of both sides, becomes the join's
// records and late elements, as the default layout's stateful DoFn makes
// them, with those of its hot keys' buckets flattened in.
func buildHot(s beam.Scope, cfg Config, key coders.Element, tagged beam.PCollection) (records, late beam.PCollection) {
	fn, bucket := NewHotFns(cfg, key, nil)
	records, late, pieces := beam.ParDo3(s, fn, tagged)
	keyType := beam.TypeDefinition{Var: beam.XType, T: tagged.Type().Components()[0].Type()}
	split, splitLate := beam.ParDo2(s.Scope("hot-buckets"), bucket, pieces, keyType)
	hot := s.Scope("hot")
	return beam.Flatten(hot, records, split), beam.Flatten(hot, late, splitLate)
}

// NewSplitFns are the split layout's two stateful DoFns for a join with
// config cfg and key coder key, their bundle caches in budget (nil: this
// process's).
func NewSplitFns(cfg Config, key coders.Element, budget *CacheBudget) (*spreadFn, *bucketFn) {
	sp := splitting{Width: cfg.splitMillis()}
	spread := &spreadFn{
		Spread: spreader{Rules: cfg.Rules, Grid: cfg.CleanupEvery, Split: sp, Horizon: cfg.Horizon,
			Key: key, NoCache: cfg.NoCache, CacheBytes: cfg.CacheBytes},
		Ticks: state.MakeBagState[[]byte]("ticks"), Tick: timers.InEventTime("tick"),
	}
	bucket := &bucketFn{
		Bucket: bucketJoiner{Rules: cfg.Rules, Grid: cfg.CleanupEvery, Split: sp, Key: key,
			NoCache: cfg.NoCache, CacheBytes: cfg.CacheBytes, Fates: cfg.Fates},
		Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup"),
	}
	spread.Spread.cache.budget, bucket.Bucket.cache.budget = budget, budget
	return spread, bucket
}

// CacheBytes is what the DoFn instance's bundle cache holds now, by its
// own estimate (tests).
func (f *intervalDoFn) CacheBytes() int64 { return f.Join.cache.used }

// CacheBytes is what the DoFn instance's bundle cache holds now, by its
// own estimate (tests).
func (f *spreadFn) CacheBytes() int64 { return f.Spread.cache.used }

// CacheBytes is what the DoFn instance's bundle cache holds now, by its
// own estimate (tests).
func (f *bucketFn) CacheBytes() int64 { return f.Bucket.cache.used }

// splitMillis is the split layout's bucket width in milliseconds:
// SplitKeys's, or by default the larger of CleanupEvery and the bounds'
// span.
func (c Config) splitMillis() int64 {
	if c.SplitWidth > 0 {
		return c.SplitWidth
	}
	lo, hi := c.Rules.Bounds.Millis()
	return max(c.CleanupEvery, hi-lo+1, 1)
}
