package streamjoiner

// This file holds the options of New and how they become a joiner's
// settings: the defaults, and every check of the options, made once.

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// The defaults that hold when MaxStateSize or StateRetention is not given.
const (
	// DefaultMaxStateSize is the cap on buffered elements without
	// MaxStateSize.
	DefaultMaxStateSize = 10000
	// DefaultStateRetention is the retention without StateRetention.
	DefaultStateRetention = time.Hour
)

// Option configures a StreamJoiner. Options are values made by this
// package's functions, in the style of package join's: Between (required),
// LowerExclusive, UpperExclusive, JoinType, LeftTime, RightTime, Clock,
// MaxStateSize and StateRetention. New checks them once; where an option
// is given twice, the later one wins.
type Option interface {
	apply(*options)
}

// optionFunc is an Option made by one of this package's functions.
type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options is what the options say, before New checks it against the
// joiner's types.
type options struct {
	typ                 join.Type
	bounds              match.Bounds
	boundsSet           bool
	leftTime, rightTime any // func(L) int64 and func(R) int64, or nil
	clock               func() time.Time
	maxStateSize        int
	maxStateSizeSet     bool
	retention           time.Duration
	retentionSet        bool
}

// Between sets the bounds, as join.Between does for the Beam interval
// join: a left element l and a right element r with the same key match iff
//
//	lower <= ts(r) - ts(l) <= upper
//
// Both ends are inclusive; add LowerExclusive or UpperExclusive to exclude
// them. The left element is the reference whichever arrives first, so the
// pairs never depend on arrival order. New requires Between.
func Between(lower, upper time.Duration) Option {
	return optionFunc(func(o *options) {
		o.bounds.Lower, o.bounds.Upper = lower, upper
		o.boundsSet = true
	})
}

// LowerExclusive makes the lower bound exclusive: ts(r) - ts(l) > lower.
func LowerExclusive() Option {
	return optionFunc(func(o *options) { o.bounds.LowerExclusive = true })
}

// UpperExclusive makes the upper bound exclusive: ts(r) - ts(l) < upper.
func UpperExclusive() Option {
	return optionFunc(func(o *options) { o.bounds.UpperExclusive = true })
}

// JoinType sets the join type, in package join's words: join.Inner (the
// default), join.LeftOuter, join.RightOuter or join.FullOuter. Outer types
// emit an element with no partner as soon as it arrives.
func JoinType(t join.Type) Option {
	return optionFunc(func(o *options) { o.typ = t })
}

// LeftTime reads a left element's timestamp, in milliseconds since the
// Unix epoch. Without it (or with nil) left elements are stamped with the
// Clock on arrival, so they pair by arrival time. Its L must be the
// joiner's left element type; New reports a mismatch.
func LeftTime[L any](f func(L) int64) Option {
	return optionFunc(func(o *options) { o.leftTime = f })
}

// RightTime is LeftTime for right elements.
func RightTime[R any](f func(R) int64) Option {
	return optionFunc(func(o *options) { o.rightTime = f })
}

// Clock sets the arrival clock that stamps the elements of a side without
// LeftTime or RightTime. The default is time.Now; tests give their own.
func Clock(now func() time.Time) Option {
	return optionFunc(func(o *options) { o.clock = now })
}

// MaxStateSize caps the elements buffered on both sides, across all keys,
// at n (which must be positive; the default is DefaultMaxStateSize). Past
// it the oldest by timestamp are evicted, on equal timestamps the left one
// first, and emit nothing.
func MaxStateSize(n int) Option {
	return optionFunc(func(o *options) { o.maxStateSize, o.maxStateSizeSet = n, true })
}

// StateRetention sets how long an element stays buffered (the default is
// DefaultStateRetention), measured from the largest timestamp seen so far
// on either side, not from the clock: after each element, everything older
// than that timestamp minus d is dropped and emits nothing. d must be
// positive, whole milliseconds, and at least the span of the bounds, so
// that nothing a newly arrived element could match is dropped.
func StateRetention(d time.Duration) Option {
	return optionFunc(func(o *options) { o.retention, o.retentionSet = d, true })
}

// settings is a joiner's checked configuration, with its defaults filled in.
type settings[K comparable, L, R any] struct {
	typ          join.Type
	bounds       match.Bounds
	leftKey      func(L) K
	rightKey     func(R) K
	leftTime     func(L) int64 // nil: stamp with clock
	rightTime    func(R) int64 // nil: stamp with clock
	clock        func() time.Time
	maxStateSize int
	retention    time.Duration
}

// newSettings applies opts over the defaults and checks the result: the
// one place where New's arguments are validated.
func newSettings[K comparable, L, R any](leftKey func(L) K, rightKey func(R) K, opts []Option) (settings[K, L, R], error) {
	const op = "beamjoin: streamjoiner.New"
	o := options{maxStateSize: DefaultMaxStateSize, retention: DefaultStateRetention}
	for i, opt := range opts {
		if opt == nil {
			return settings[K, L, R]{}, fmt.Errorf("%s: option %d is nil", op, i)
		}
		opt.apply(&o)
	}
	s := settings[K, L, R]{typ: o.typ, bounds: o.bounds, leftKey: leftKey, rightKey: rightKey,
		clock: o.clock, maxStateSize: o.maxStateSize, retention: o.retention}
	var err error
	if s.leftTime, err = timeFunc[L](o.leftTime, "LeftTime", "left"); err != nil {
		return s, err
	}
	if s.rightTime, err = timeFunc[R](o.rightTime, "RightTime", "right"); err != nil {
		return s, err
	}
	switch {
	case s.typ > join.FullOuter:
		return s, fmt.Errorf("%s: unknown join type %v", op, s.typ)
	case !o.boundsSet:
		return s, fmt.Errorf("%s needs bounds: add streamjoiner.Between(lower, upper)", op)
	case leftKey == nil:
		return s, fmt.Errorf("%s: the left key selector is nil", op)
	case rightKey == nil:
		return s, fmt.Errorf("%s: the right key selector is nil", op)
	case s.maxStateSize <= 0:
		return s, fmt.Errorf("%s: MaxStateSize(%d) must be positive", op, s.maxStateSize)
	case s.retention <= 0 || s.retention%time.Millisecond != 0:
		return s, fmt.Errorf("%s: StateRetention(%v) must be a positive whole number of milliseconds, the precision of timestamps", op, s.retention)
	}
	if err := s.bounds.Validate(); err != nil {
		return s, fmt.Errorf("%s: Between: %s", op, strings.TrimPrefix(err.Error(), "beamjoin: "))
	}
	if span := boundsSpan(s.bounds); s.retention < span {
		which := fmt.Sprintf("StateRetention(%v)", s.retention)
		if !o.retentionSet {
			which = fmt.Sprintf("the default StateRetention, %v,", s.retention)
		}
		return s, fmt.Errorf("%s: %s is shorter than the span %v of the bounds %v: elements still inside the bounds would be dropped", op, which, span, s.bounds)
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	return s, nil
}

// timeFunc returns f, given to the option named, as a timestamp function of
// T elements (the side named), or an error if it reads another type.
func timeFunc[T any](f any, option, side string) (func(T) int64, error) {
	if f == nil {
		return nil, nil
	}
	tf, ok := f.(func(T) int64)
	if !ok {
		return nil, fmt.Errorf("beamjoin: streamjoiner.New: %s takes a func(%v) int64 for this joiner's %s elements, got %T", option, reflect.TypeFor[T](), side, f)
	}
	return tf, nil
}

// boundsSpan returns the shortest retention that never drops a buffered
// element a newly arrived element could still match: the width of the
// bounds, or the farther end alone if the bounds lie on one side of zero.
func boundsSpan(b match.Bounds) time.Duration {
	lo, hi := b.Millis()
	return time.Duration(max(hi-lo, hi, -lo)) * time.Millisecond
}
