package streamjoiner

import (
	"fmt"
	"time"

	"github.com/beamjoin/beamjoin/transforms/join"
)

// The defaults that a zero MaxStateSize or StateRetention stands for.
const (
	// DefaultMaxStateSize is the seed's cap on buffered elements.
	DefaultMaxStateSize = 10000
	// DefaultStateRetention is the seed's retention, one hour.
	DefaultStateRetention = time.Hour
)

// Config says how a StreamJoiner joins: the join type, the bounds, how to
// read keys and timestamps, and how much it may buffer.
//
// Bounds, LeftKey and RightKey are required. Every other field has a
// useful zero value: Type's is join.Inner, nil timestamp extractors stamp
// elements with the Clock at arrival, a nil Clock is time.Now, and a zero
// MaxStateSize or StateRetention means its default.
type Config[L, R any, K comparable] struct {
	// Type is the join type, in package join's words: join.Inner (the zero
	// value), join.LeftOuter, join.RightOuter or join.FullOuter. Outer
	// types emit an element with no partner as soon as it arrives.
	Type join.Type
	// Bounds is the time range in which elements match.
	Bounds Bounds

	// LeftKey and RightKey read the join key of an element. A nil key (a
	// nil pointer, or a nil in an interface K) or the empty string is no
	// key: the element is rejected with an error naming its side. Other
	// zero values, such as 0, are keys.
	LeftKey  func(L) K
	RightKey func(R) K

	// LeftTime and RightTime read an element's timestamp in milliseconds
	// since the Unix epoch. When nil, the element is stamped with Clock at
	// arrival, so elements pair by arrival time.
	LeftTime  func(L) int64
	RightTime func(R) int64
	// Clock is the arrival clock for sides without a timestamp extractor.
	// Nil means time.Now; tests inject their own.
	Clock func() time.Time

	// MaxStateSize caps the elements buffered on both sides, across all
	// keys. Past it the oldest by timestamp are evicted, on equal
	// timestamps the left one first, and emit nothing. Zero means
	// DefaultMaxStateSize.
	MaxStateSize int
	// StateRetention is how long an element stays buffered, measured from
	// the largest timestamp seen so far on either side, not from the clock:
	// after each element, everything older than that timestamp minus
	// StateRetention is dropped and emits nothing. It must be at least the
	// Span of the Bounds. Zero means DefaultStateRetention.
	StateRetention time.Duration
}

// InnerJoin returns the configuration of an inner join on the given keys
// and bounds, with every other field at its default.
func InnerJoin[L, R any, K comparable](leftKey func(L) K, rightKey func(R) K, bounds Bounds) Config[L, R, K] {
	return Config[L, R, K]{Type: join.Inner, Bounds: bounds, LeftKey: leftKey, RightKey: rightKey}
}

// LeftJoin returns the configuration of a left outer join on the given keys
// and bounds, with every other field at its default.
func LeftJoin[L, R any, K comparable](leftKey func(L) K, rightKey func(R) K, bounds Bounds) Config[L, R, K] {
	return Config[L, R, K]{Type: join.LeftOuter, Bounds: bounds, LeftKey: leftKey, RightKey: rightKey}
}

// withDefaults validates c and returns it with its defaults filled in.
func (c Config[L, R, K]) withDefaults() (Config[L, R, K], error) {
	if c.Type > join.FullOuter {
		return c, fmt.Errorf("beamjoin: unknown join type %v", c.Type)
	}
	if err := c.Bounds.validate(); err != nil {
		return c, err
	}
	if c.LeftKey == nil {
		return c, fmt.Errorf("beamjoin: left key selector is missing")
	}
	if c.RightKey == nil {
		return c, fmt.Errorf("beamjoin: right key selector is missing")
	}
	switch {
	case c.MaxStateSize < 0:
		return c, fmt.Errorf("beamjoin: max state size %d must be > 0 (0 means the default, %d)", c.MaxStateSize, DefaultMaxStateSize)
	case c.MaxStateSize == 0:
		c.MaxStateSize = DefaultMaxStateSize
	}
	switch {
	case c.StateRetention < 0:
		return c, fmt.Errorf("beamjoin: state retention %v must be > 0 (0 means the default, %v)", c.StateRetention, DefaultStateRetention)
	case c.StateRetention == 0:
		c.StateRetention = DefaultStateRetention
	}
	if c.StateRetention%time.Millisecond != 0 {
		return c, fmt.Errorf("beamjoin: state retention %v must be whole milliseconds, the precision of timestamps", c.StateRetention)
	}
	if span := c.Bounds.Span(); c.StateRetention < span {
		return c, fmt.Errorf("beamjoin: state retention %v is shorter than the span %v of %v: elements still inside the bounds would be dropped", c.StateRetention, span, c.Bounds)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c, nil
}
