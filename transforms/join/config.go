package join

// This file holds how a transform's options become its config: which
// transform takes which options, the defaults, and every check of the
// options, made once, whether by the transform or by Route.Check; then
// each engine's configuration, made of a config; and how Interval and
// AsOf choose their path by their inputs (withInputs).

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/asof"
	"github.com/beamjoin/beamjoin/transforms/join/internal/interval"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowed"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowing"
)

// config is the validated form of a join's options.
type config struct {
	bounds        match.Bounds
	typ           Type
	emit          Emit
	lateness      time.Duration
	maxBuffered   int
	cleanupEvery  time.Duration
	horizon       time.Duration // ProgressHorizon
	split         bool          // SplitKeys (or HotKeyBuckets): the split layout
	splitWidth    time.Duration // SplitKeys's width; 0: the default
	window        *window.Fn
	hotKeyBuckets int           // HotKeyBuckets's n, checked only
	noCache       bool          // tests and benchmarks only: no bundle cache
	cacheBytes    int64         // BundleCacheBytes; 0: the default
	bounded       bool          // the bounded-input path: Bounded, or bounded inputs
	streaming     bool          // Streaming: the streaming path even on bounded inputs
	inputsBounded bool          // both inputs are bounded (withInputs)
	bucketWidth   time.Duration // BoundedBucket; 0: the default
	reportLate    bool          // ReportLate
	trackFates    bool          // TrackFates
	uniqueLeft    bool          // UniqueLeft
	hotAfter      int           // HotKeyThreshold's n, if hotGiven
	hotGiven      bool          // HotKeyThreshold
	hotOff        bool          // NoHotKeyDetection
	maxAge        time.Duration // MaxAge (AsOf)
	strict        bool          // Strict (AsOf)
	set           setMask
	calls         []optionCall // the options that set a value one option may set (given)
	contradiction [2]string    // the first two of calls that contradict each other

	noAppendCleanup bool // tests and benchmarks only: every cleanup reads and rewrites
	noWriteBehind   bool // tests and benchmarks only: every append a state call of its own
	gatherBytes     int  // tests only: the bounded paths' gatherers' Hold; 0: the default
	boundedShards   int  // tests only: the bounded paths' shards of keys; 0: the default
}

// splitOption names the option that chose the split layout.
func (c config) splitOption() string {
	if c.set&setSplitKeys != 0 {
		return fmt.Sprintf("SplitKeys(%v)", c.splitWidth)
	}
	return fmt.Sprintf("HotKeyBuckets(%d)", c.hotKeyBuckets)
}

// rules is the config in the matching core's terms.
func (c config) rules() match.Rules {
	return match.Rules{Bounds: c.bounds, Type: c.typ.core(), Emit: c.emit.core(), Lateness: c.lateness}
}

// setMask records which options were given, so that each transform can
// reject the ones it does not take.
type setMask uint32

const (
	setBounds setMask = 1 << iota
	setLowerExclusive
	setUpperExclusive
	setType
	setEmit
	setLateness
	setMaxBuffered
	setCleanupEvery
	setWindow
	setHotKeyBuckets
	setBounded
	setProgressHorizon
	setBundleCacheBytes
	setReportLate
	setTrackFates
	setMaxAge
	setStrict
	setBoundedBucket
	setSplitKeys
	setUniqueLeft
	setStreaming
	setTestOnly
	setHotKeys
)

var optionNames = []struct {
	bit  setMask
	name string
}{
	{setBounds, "Between"},
	{setLowerExclusive, "LowerExclusive"},
	{setUpperExclusive, "UpperExclusive"},
	{setType, "a join type"},
	{setEmit, "an emission mode"},
	{setLateness, "AllowedLateness"},
	{setMaxBuffered, "MaxBufferedPerKey"},
	{setCleanupEvery, "CleanupEvery"},
	{setWindow, "WindowInto"},
	{setHotKeyBuckets, "HotKeyBuckets"},
	{setBounded, "Bounded"},
	{setProgressHorizon, "ProgressHorizon"},
	{setBundleCacheBytes, "BundleCacheBytes"},
	{setReportLate, "ReportLate"},
	{setTrackFates, "TrackFates"},
	{setMaxAge, "MaxAge"},
	{setStrict, "Strict"},
	{setBoundedBucket, "BoundedBucket"},
	{setSplitKeys, "SplitKeys"},
	{setUniqueLeft, "UniqueLeft"},
	{setStreaming, "Streaming"},
	{setTestOnly, "a test-only option"},
	{setHotKeys, "HotKeyThreshold"},
}

// The options each transform takes.
const (
	intervalOptions = setBounds | setLowerExclusive | setUpperExclusive | setType | setEmit | setLateness |
		setMaxBuffered | setCleanupEvery | setHotKeyBuckets | setBounded | setBoundedBucket | setProgressHorizon | setBundleCacheBytes | setTrackFates | setSplitKeys | setUniqueLeft | setStreaming | setTestOnly | setHotKeys
	windowOptions  = setType | setWindow | setLateness | setReportLate | setTrackFates
	coGroupOptions = setWindow | setLateness | setReportLate | setTrackFates
	asofOptions    = setType | setEmit | setMaxAge | setStrict | setBounded | setStreaming | setProgressHorizon | setTestOnly
)

// newConfig applies opts over the defaults and rejects options that the
// transform named op does not take (everything outside allowed), and
// values that no transform takes.
func newConfig(op string, allowed setMask, opts []Option) (config, error) {
	c := config{horizon: DefaultProgressHorizon}
	for i, o := range opts {
		if o == nil {
			return c, fmt.Errorf("beamjoin: %s: option %d is nil", op, i)
		}
		o.apply(&c)
	}
	if a := c.contradiction; a[0] != "" {
		return c, fmt.Errorf("beamjoin: %s: %s and %s contradict each other: give one of them", op, a[0], a[1])
	}
	if c.inputsBounded && !c.streaming {
		c.bounded = true // bounded inputs take the bounded path (withInputs)
	}
	for _, n := range optionNames {
		if c.set&n.bit != 0 && allowed&n.bit == 0 {
			return c, fmt.Errorf("beamjoin: %s does not take %s", op, n.name)
		}
	}
	switch {
	case c.set&setBounded != 0 && c.streaming:
		return c, fmt.Errorf("beamjoin: %s: Bounded and Streaming cannot be given together: each chooses a path", op)
	case !typeWords.valid(uint8(c.typ)):
		return c, fmt.Errorf("beamjoin: %s: unknown join type %v", op, c.typ)
	case !emitWords.valid(uint8(c.emit)):
		return c, fmt.Errorf("beamjoin: %s: unknown emission mode %v", op, c.emit)
	case c.maxBuffered < 0:
		return c, fmt.Errorf("beamjoin: %s: MaxBufferedPerKey(%d) is negative", op, c.maxBuffered)
	case c.horizon < 0 || c.horizon%time.Millisecond != 0:
		return c, fmt.Errorf("beamjoin: %s: ProgressHorizon(%v) must be zero or a positive whole number of milliseconds", op, c.horizon)
	case c.hotKeyBuckets < 0:
		return c, fmt.Errorf("beamjoin: %s: HotKeyBuckets(%d) is negative", op, c.hotKeyBuckets)
	case c.set&setSplitKeys != 0 && (c.splitWidth < 0 || c.splitWidth%time.Millisecond != 0):
		return c, fmt.Errorf("beamjoin: %s: SplitKeys(%v) must be zero or a positive whole number of milliseconds", op, c.splitWidth)
	case c.split && c.maxBuffered > 0 && !c.bounded:
		return c, fmt.Errorf("beamjoin: %s: MaxBufferedPerKey(%d) cannot be combined with %s: the cap counts a key's elements across its buckets, which no one of them sees", op, c.maxBuffered, c.splitOption())
	case c.uniqueLeft && c.split && !c.bounded:
		return c, fmt.Errorf("beamjoin: %s: UniqueLeft cannot be combined with %s: a bucket holds a key's left element only for its own time range", op, c.splitOption())
	case c.uniqueLeft && c.maxBuffered > 0 && !c.bounded:
		return c, fmt.Errorf("beamjoin: %s: UniqueLeft cannot be combined with MaxBufferedPerKey(%d): the cap counts buffered elements, and UniqueLeft buffers fewer, so the cap would evict other ones", op, c.maxBuffered)
	case c.set&setBundleCacheBytes != 0 && c.cacheBytes <= 0:
		return c, fmt.Errorf("beamjoin: %s: BundleCacheBytes(%d) must be positive", op, c.cacheBytes)
	case c.set&setBoundedBucket != 0 && (c.bucketWidth < time.Millisecond || c.bucketWidth%time.Millisecond != 0):
		return c, fmt.Errorf("beamjoin: %s: BoundedBucket(%v) must be a positive whole number of milliseconds", op, c.bucketWidth)
	case c.hotGiven && c.hotAfter <= 0:
		return c, fmt.Errorf("beamjoin: %s: HotKeyThreshold(%d) must be positive (NoHotKeyDetection turns detection off)", op, c.hotAfter)
	case c.hotGiven && !c.bounded && (c.split || c.maxBuffered > 0 || c.uniqueLeft):
		other, why := c.hotConflict()
		return c, fmt.Errorf("beamjoin: %s: HotKeyThreshold(%d) cannot be combined with %s, which %s", op, c.hotAfter, other, why)
	case c.set&setCleanupEvery != 0 && (c.cleanupEvery < time.Millisecond || c.cleanupEvery%time.Millisecond != 0):
		return c, fmt.Errorf("beamjoin: %s: CleanupEvery(%v) must be a positive whole number of milliseconds", op, c.cleanupEvery)
	}
	return c, nil
}

// intervalConfig is Interval's config: bounds are required, and the
// matching core checks that they and the lateness can be met.
func intervalConfig(opts []Option) (config, error) {
	c, err := newConfig("join.Interval", intervalOptions, opts)
	if err != nil {
		return c, err
	}
	if c.set&setBounds == 0 {
		return c, fmt.Errorf("beamjoin: join.Interval needs bounds: add join.Between(lower, upper)")
	}
	// The rules check the bounds first: an error once the bounds pass is
	// the lateness's.
	if err := c.bounds.Validate(); err != nil {
		return c, &OptionError{Option: "Between", Err: err}
	}
	if err := c.rules().Validate(); err != nil {
		return c, &OptionError{Option: "AllowedLateness", Err: err}
	}
	return c, nil
}

// asofConfig is AsOf's config: Inner or LeftOuter, EmitFinal (the
// default) or EmitRetract, and a max age that is a whole number of
// milliseconds, not negative.
func asofConfig(opts []Option) (config, error) {
	const op = "join.AsOf"
	c, err := newConfig(op, asofOptions, opts)
	if err != nil {
		return c, err
	}
	if c.set&setEmit == 0 {
		c.emit = EmitFinal
	}
	switch {
	case c.typ != Inner && c.typ != LeftOuter:
		return c, fmt.Errorf("beamjoin: %s takes Inner or LeftOuter, not %v: every left element has at most one version, and a version is not an event to report", op, c.typ)
	case c.emit != EmitFinal && c.emit != EmitRetract:
		return c, fmt.Errorf("beamjoin: %s takes EmitFinal or EmitRetract, not %v", op, c.emit)
	case c.maxAge < 0:
		return c, &OptionError{Option: "MaxAge", Err: &reasonError{prefix: "beamjoin: " + op + ": ", reason: fmt.Sprintf("max age %v is negative", c.maxAge)}}
	case c.maxAge%time.Millisecond != 0:
		return c, &OptionError{Option: "MaxAge", Err: &reasonError{prefix: "beamjoin: " + op + ": ",
			reason: fmt.Sprintf("max age %v is finer than a millisecond, the precision of event time", c.maxAge)}}
	}
	return c, nil
}

// OptionError is an option value that a join rejects. Option names the
// function that made the option ("Between" for the bounds and their
// exclusive ends, "AllowedLateness", "WindowInto"), so that a caller that
// builds options from settings of its own, such as a command's flags, can
// name the setting at fault; Reason is what is wrong, without the
// "beamjoin:" prefix or the option, e.g. "lower bound 10m0s is greater than
// upper bound 5m0s". Err is the whole error, as its Error method says it.
type OptionError struct {
	Option string
	Err    error
}

// Error returns the whole error, with its prefix and the option it names.
func (e *OptionError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// Reason is what is wrong with the option: the end of the error's text,
// after its "beamjoin:" prefix and the transform and option it names.
func (e *OptionError) Reason() string {
	var r *reasonError
	if errors.As(e.Err, &r) {
		return r.reason
	}
	return strings.TrimPrefix(e.Err.Error(), "beamjoin: ")
}

// reasonError is an error whose text is a prefix naming where it happened
// and a reason.
type reasonError struct{ prefix, reason string }

func (e *reasonError) Error() string { return e.prefix + e.reason }

// windowedConfig is the config of CoGroup and Window (named op): a window
// given with WindowInto must be one that can assign event times, and the
// allowed lateness a whole number of milliseconds, not negative.
func windowedConfig(op string, allowed setMask, opts []Option) (config, error) {
	c, err := newConfig(op, allowed, opts)
	if err != nil {
		return c, err
	}
	if c.lateness < 0 {
		return c, &OptionError{Option: "AllowedLateness", Err: &reasonError{prefix: "beamjoin: " + op + ": ", reason: fmt.Sprintf("allowed lateness %v is negative", c.lateness)}}
	}
	if c.lateness%time.Millisecond != 0 {
		return c, &OptionError{Option: "AllowedLateness", Err: &reasonError{prefix: "beamjoin: " + op + ": ",
			reason: fmt.Sprintf("allowed lateness %v is finer than a millisecond, the precision of event time", c.lateness)}}
	}
	if c.set&setWindow == 0 {
		return c, nil
	}
	if c.window == nil {
		return c, fmt.Errorf("beamjoin: %s: WindowInto(nil): pass a window.Fn such as window.NewFixedWindows(time.Minute)", op)
	}
	if err := checkWindowFn(c.window); err != nil {
		prefix := fmt.Sprintf("beamjoin: %s: WindowInto(%s): ", op, windowing.FnName(c.window))
		return c, &OptionError{Option: "WindowInto", Err: &reasonError{prefix: prefix, reason: err.Error()}}
	}
	return c, nil
}

// checkWindowFn reports a window length that is not positive or is finer
// than event time, and sliding windows that leave gaps: with a period over
// the size, an element between two windows would be in none, and dropped.
func checkWindowFn(fn *window.Fn) error {
	type length struct {
		name string
		d    time.Duration
	}
	var lengths []length
	switch fn.Kind {
	case window.FixedWindows:
		lengths = []length{{"size", fn.Size}}
	case window.SlidingWindows:
		lengths = []length{{"period", fn.Period}, {"size", fn.Size}}
	case window.Sessions:
		lengths = []length{{"gap", fn.Gap}}
	}
	for _, l := range lengths {
		if l.d <= 0 {
			return fmt.Errorf("the %s %v is not positive", l.name, l.d)
		}
		if l.d%time.Millisecond != 0 {
			return fmt.Errorf("the %s %v is finer than a millisecond, the precision of event time", l.name, l.d)
		}
	}
	if fn.Kind == window.SlidingWindows && fn.Period > fn.Size {
		return fmt.Errorf("the period %v is greater than the size %v: an element between two windows would be in none", fn.Period, fn.Size)
	}
	return nil
}

// interval is the config in the interval engine's terms.
func (c config) interval() interval.Config {
	return interval.Config{
		Rules: c.rules(), MaxBuffered: c.maxBuffered, CleanupEvery: c.cleanupMillis(), Horizon: c.horizon.Milliseconds(),
		Split: c.split, SplitWidth: c.splitWidth.Milliseconds(), Bounded: c.bounded, BucketWidth: c.bucketWidth.Milliseconds(),
		CacheBytes: c.cacheBytes, NoCache: c.noCache, NoAppendCleanup: c.noAppendCleanup, NoWriteBehind: c.noWriteBehind, Fates: c.trackFates, UniqueLeft: c.uniqueLeft,
		GatherBytes: c.gatherBytes, Shards: c.boundedShards, HotAfter: c.hotKeyThreshold(),
	}
}

// hotConflict names the option that HotKeyThreshold cannot be combined
// with, and why.
func (c config) hotConflict() (string, string) {
	switch {
	case c.split:
		return c.splitOption(), "splits every key already"
	case c.maxBuffered > 0:
		return fmt.Sprintf("MaxBufferedPerKey(%d)", c.maxBuffered), "counts a key's elements in one place"
	}
	return "UniqueLeft", "needs a key's left element in one place"
}

// hotKeyThreshold is the interval engine's HotAfter: HotKeyThreshold's, or
// the default; 0 (off) under NoHotKeyDetection, and where the join's
// layout or rules need a key's elements in one place or split them anyway
// (HotKeyThreshold's documentation).
func (c config) hotKeyThreshold() int {
	switch {
	case c.hotOff || c.split || c.bounded || c.maxBuffered > 0 || c.uniqueLeft:
		return 0
	case c.hotGiven:
		return c.hotAfter
	}
	return DefaultHotKeyThreshold
}

// cleanupMillis is the interval join's CleanupEvery in milliseconds: the
// option's, or the default derived from the bounds and the lateness.
func (c config) cleanupMillis() int64 {
	if c.set&setCleanupEvery != 0 {
		return c.cleanupEvery.Milliseconds()
	}
	lo, hi := c.bounds.Millis()
	return max((max(hi, 0)+max(-lo, 0)+2*c.lateness.Milliseconds())/4, 1)
}

// asof is the config in the as-of engine's terms.
func (c config) asof() asof.Config {
	r := asof.Rules{Outer: c.typ == LeftOuter, Strict: c.strict, MaxAge: -1, Retract: c.emit == EmitRetract, Horizon: c.horizon.Milliseconds()}
	if c.set&setMaxAge != 0 {
		r.MaxAge = c.maxAge.Milliseconds()
	}
	return asof.Config{Rules: r, Bounded: c.bounded, GatherBytes: c.gatherBytes, Shards: c.boundedShards}
}

// windowed is the config in the windowed engine's terms, for a window join
// (join) or a cogroup.
func (c config) windowed(join bool) windowed.Config {
	return windowed.Config{Window: c.window, Lateness: c.lateness, LatenessSet: c.set&setLateness != 0,
		Join: join, Type: c.typ.core(), Fates: c.trackFates}
}

// Route names one of the package's transforms, for checking options
// before a pipeline is built and for naming a route in text (flags,
// JSON).
type Route uint8

// The routes.
const (
	RouteInterval Route = iota
	RouteWindow
	RouteCoGroup
	RouteAsOf
	RouteMulti
)

var routeWords = words{what: "route", kind: "Route", names: []string{
	RouteInterval: "interval", RouteWindow: "window", RouteCoGroup: "cogroup", RouteAsOf: "asof", RouteMulti: "multi",
}}

// String returns "interval", "window", "cogroup", "asof" or "multi".
func (r Route) String() string { return routeWords.name(uint8(r)) }

// MarshalText returns the route's String form; an unknown route is an
// error.
func (r Route) MarshalText() ([]byte, error) { return routeWords.marshal(uint8(r)) }

// UnmarshalText reads a route from its String form.
func (r *Route) UnmarshalText(text []byte) error { return routeWords.unmarshal(text, (*uint8)(r)) }

// Check reports what the route's Try function would reject in opts,
// without building anything, so that a program can validate settings of
// its own (a command's flags) before it builds a pipeline. Only the inputs
// are left to check. It judges the options as for unbounded inputs: the
// combinations that only the bounded path takes (UniqueLeft or SplitKeys
// with MaxBufferedPerKey) pass only with Bounded, though Interval takes
// them on bounded inputs, which choose that path by themselves.
//
//	err := join.RouteInterval.Check(join.Between(10*time.Minute, 5*time.Minute))
//	// beamjoin: join.Interval: lower bound 10m0s is greater than upper bound 5m0s
func (r Route) Check(opts ...Option) error {
	switch r {
	case RouteInterval:
		_, err := intervalConfig(opts)
		return err
	case RouteWindow:
		_, err := windowedConfig("join.Window", windowOptions, opts)
		return err
	case RouteCoGroup:
		_, err := windowedConfig("join.CoGroup", coGroupOptions, opts)
		return err
	case RouteAsOf:
		_, err := asofConfig(opts)
		return err
	case RouteMulti:
		// Multi's own options; each input's are checked with its input.
		_, err := newConfig("join.Multi", multiOptions, opts)
		return err
	}
	_, err := r.MarshalText()
	return err
}

// inputsBounded is the option TryInterval, TryAsOf and TryMulti add when
// all of their inputs are bounded: the bounded path, unless Streaming is given.
func inputsBounded() Option {
	return optionFunc(func(c *config) { c.inputsBounded = true })
}

// withInputs is opts with inputsBounded added when every one of inputs
// is a bounded PCollection.
func withInputs(opts []Option, inputs ...beam.PCollection) []Option {
	for _, in := range inputs {
		if !isBounded(in) {
			return opts
		}
	}
	return append(opts[:len(opts):len(opts)], inputsBounded())
}

// isBounded reports whether p is a bounded PCollection. beam.PCollection
// does not export its graph node's Bounded method in the Go SDK v2.77, but
// its String is the node's, "{id: type/coder windowing}" with
// ":unbounded" before the closing brace when the node is unbounded
// (graph.Node.String). A windowing strategy whose own text ended so would
// be taken for unbounded: the streaming path, which joins any input.
func isBounded(p beam.PCollection) bool {
	return p.IsValid() && !strings.HasSuffix(p.String(), ":unbounded}")
}
