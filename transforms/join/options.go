package join

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/beamjoin/beamjoin/transforms/join/match"
)

// Option configures a join. Options are values: join types (Inner,
// LeftOuter, …), emission modes (EmitImmediate, …) and the results of
// functions such as Between. They are validated once, when the transform is
// added to the pipeline; Try variants return the error, the others panic
// with it.
type Option interface {
	apply(*config)
}

// Type is a join type: which sides keep their elements that never match.
type Type match.Type

// The join types. Each is an Option.
const (
	// Inner emits pairs only.
	Inner = Type(match.Inner)
	// LeftOuter also emits left elements that have no partner.
	LeftOuter = Type(match.LeftOuter)
	// RightOuter also emits right elements that have no partner.
	RightOuter = Type(match.RightOuter)
	// FullOuter also emits elements of either side that have no partner.
	FullOuter = Type(match.FullOuter)
)

func (t Type) apply(c *config) { c.rules.Type = match.Type(t); c.set |= setType }

// String returns "inner", "left", "right" or "full".
func (t Type) String() string { return match.Type(t).String() }

// Emit is an outer-emission mode of the interval join: when an element
// without a partner is reported.
type Emit match.Emit

// The emission modes. Each is an Option.
const (
	// EmitImmediate (the default) reports an outer element as unmatched as
	// soon as it arrives without a buffered partner; a partner that arrives
	// later produces the pair as a further record.
	EmitImmediate = Emit(match.Immediate)
	// EmitFinal reports an outer element as unmatched exactly once, when
	// event time proves no partner can still come, and only if it never
	// matched. The record keeps the element's own timestamp; the transform
	// holds the output watermark so it is never late downstream.
	EmitFinal = Emit(match.Final)
	// EmitRetract behaves as EmitImmediate and, when an element reported
	// unmatched meets its first partner, emits a KindRetract record for the
	// unmatched one before the pair. The changelog nets to EmitFinal's result.
	EmitRetract = Emit(match.Retract)
)

func (e Emit) apply(c *config) { c.rules.Emit = match.Emit(e); c.set |= setEmit }

// String returns "immediate", "final" or "retract".
func (e Emit) String() string { return match.Emit(e).String() }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// Between sets the interval join's bounds: a left element l and a right
// element r with the same key match iff lower <= ts(r) - ts(l) <= upper.
// Both ends are inclusive; add LowerExclusive or UpperExclusive to exclude
// them. Flink's intervalJoin().between(lower, upper) is the same pair.
func Between(lower, upper time.Duration) Option {
	return optionFunc(func(c *config) {
		c.rules.Bounds.Lower, c.rules.Bounds.Upper = lower, upper
		c.set |= setBounds
	})
}

// LowerExclusive makes the lower bound exclusive: ts(r) - ts(l) > lower.
var LowerExclusive Option = optionFunc(func(c *config) { c.rules.Bounds.LowerExclusive = true; c.set |= setLowerExclusive })

// UpperExclusive makes the upper bound exclusive: ts(r) - ts(l) < upper.
var UpperExclusive Option = optionFunc(func(c *config) { c.rules.Bounds.UpperExclusive = true; c.set |= setUpperExclusive })

// AllowedLateness keeps buffered elements d longer than the bounds need, so
// that elements up to d behind the watermark still join.
func AllowedLateness(d time.Duration) Option {
	return optionFunc(func(c *config) { c.rules.Lateness = d; c.set |= setLateness })
}

// MaxBufferedPerKey caps the elements a key buffers on both sides together.
// Beyond it the oldest by timestamp (on a tie, left first) are evicted and
// counted as evicted. Under EmitFinal an evicted outer element that never
// matched is emitted as unmatched then; under EmitImmediate and EmitRetract
// it was reported unmatched when it arrived, and that record stands. Pairs
// an evicted element would still have made are lost: that is the price of
// the cap. Zero (the default) means no cap.
func MaxBufferedPerKey(n int) Option {
	return optionFunc(func(c *config) { c.maxBuffered = n; c.set |= setMaxBuffered })
}

// CleanupEvery sets how finely the interval join's cleanup timers are
// placed: each fires at its expiry rounded up to a multiple of d, so one
// firing clears every element that expired in that span. Coarser means fewer
// timer firings (each a state read and rewrite) at the cost of buffering
// elements, and delaying EmitFinal's unmatched records, up to d longer.
// The default is one second; one millisecond makes cleanup exact.
func CleanupEvery(d time.Duration) Option {
	return optionFunc(func(c *config) { c.cleanupEvery = d; c.set |= setCleanupEvery })
}

// HotKeyBuckets lets the interval join move the buffer of a key that holds
// more than n elements out of its bag and into time buckets of a
// state.Map, so that an arrival reads the few buckets its partners can be
// in rather than the key's whole buffer; see Interval. It declares map
// state, which Prism supports but not every runner does.
func HotKeyBuckets(n int) Option {
	return optionFunc(func(c *config) { c.bucketAbove = n; c.set |= setHotKeyBuckets })
}

// WindowInto windows both inputs of CoGroup or Window with fn before they are
// grouped. Without it the inputs' own windowing is used, as set by the
// caller with beam.WindowInto.
func WindowInto(fn *window.Fn) Option {
	return optionFunc(func(c *config) { c.window = fn; c.set |= setWindow })
}

// config is the validated form of a join's options.
type config struct {
	rules        match.Rules
	maxBuffered  int
	cleanupEvery time.Duration
	bucketAbove  int
	window       *window.Fn
	set          setMask
}

// setMask records which options were given, so that each transform can
// reject the ones it does not take.
type setMask uint16

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
}

// newConfig applies opts over the defaults and rejects options that the
// transform named op does not take (everything outside allowed).
func newConfig(op string, allowed setMask, opts []Option) (config, error) {
	c := config{cleanupEvery: time.Second}
	for i, o := range opts {
		if o == nil {
			return c, fmt.Errorf("beamjoin: %s: option %d is nil", op, i)
		}
		o.apply(&c)
	}
	for _, n := range optionNames {
		if c.set&n.bit != 0 && allowed&n.bit == 0 {
			return c, fmt.Errorf("beamjoin: %s does not take %s", op, n.name)
		}
	}
	if c.maxBuffered < 0 {
		return c, fmt.Errorf("beamjoin: %s: MaxBufferedPerKey(%d) is negative", op, c.maxBuffered)
	}
	if c.bucketAbove < 0 {
		return c, fmt.Errorf("beamjoin: %s: HotKeyBuckets(%d) is negative", op, c.bucketAbove)
	}
	if c.cleanupEvery < time.Millisecond || c.cleanupEvery%time.Millisecond != 0 {
		return c, fmt.Errorf("beamjoin: %s: CleanupEvery(%v) must be a positive whole number of milliseconds", op, c.cleanupEvery)
	}
	return c, nil
}
