package streamjoiner

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// ErrEmptyKey is what errors.Is finds in the error of a ProcessLeft or
// ProcessRight call whose key selector returned no key.
var ErrEmptyKey = errors.New("beamjoin: key selector returned an empty key")

// emptyKeyError names the side whose key selector returned no key.
type emptyKeyError struct{ side join.Side }

func (e *emptyKeyError) Error() string {
	return fmt.Sprintf("beamjoin: %v key selector returned an empty key", e.side)
}

func (e *emptyKeyError) Is(target error) bool { return target == ErrEmptyKey }

var emptyKey = [2]error{join.Left: &emptyKeyError{join.Left}, join.Right: &emptyKeyError{join.Right}}

// StreamJoiner joins two streams fed to it one element at a time, in
// memory: each element is matched against the other side's buffered
// elements with the same key, then buffered itself. See the package
// documentation for what it emits and when it forgets.
//
// A StreamJoiner is safe for concurrent use. Its methods take turns, so the
// functions of its Config and its JoinFunc are never called concurrently by
// one joiner.
type StreamJoiner[L, R any, K comparable, O any] struct {
	cfg       Config[L, R, K]
	fn        JoinFunc[L, R, O]
	sides     [2]reader[L, R, K]
	rules     match.Rules
	retention int64 // StateRetention in milliseconds
	// keyIsInterface: a K that is an interface type can hold a nil pointer
	// or a zero value that == cannot see.
	keyIsInterface bool
	// zeroKeyIsEmpty: K's zero value is nil or the empty string.
	zeroKeyIsEmpty bool

	mu      sync.Mutex
	keys    keyTable[L, R, K]
	sizes   [2]int // buffered elements per side
	maxTime int64  // the largest timestamp seen, or math.MinInt64
}

// value is one buffered element of either side; only the field of its
// side is set. Elements are held by pointer, which keeps the core's
// entries small, so that moving them is cheap.
type value[L, R any] struct {
	left  *L
	right *R
}

// reader reads the key and the timestamp of one side's elements, with that
// side's functions from the Config: all that tells the sides apart.
type reader[L, R any, K comparable] struct {
	key  func(value[L, R]) K
	time func(value[L, R]) int64 // nil: stamp with the clock
}

// readers returns the readers of the two sides.
func readers[L, R any, K comparable](cfg Config[L, R, K]) [2]reader[L, R, K] {
	var rs [2]reader[L, R, K]
	rs[match.Left].key = func(v value[L, R]) K { return cfg.LeftKey(*v.left) }
	rs[match.Right].key = func(v value[L, R]) K { return cfg.RightKey(*v.right) }
	if cfg.LeftTime != nil {
		rs[match.Left].time = func(v value[L, R]) int64 { return cfg.LeftTime(*v.left) }
	}
	if cfg.RightTime != nil {
		rs[match.Right].time = func(v value[L, R]) int64 { return cfg.RightTime(*v.right) }
	}
	return rs
}

// New validates cfg, fills in its defaults and returns a joiner that joins
// with fn. The errors name the field at fault.
func New[L, R any, K comparable, O any](cfg Config[L, R, K], fn JoinFunc[L, R, O]) (*StreamJoiner[L, R, K, O], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, fmt.Errorf("beamjoin: join function is missing")
	}
	return &StreamJoiner[L, R, K, O]{
		cfg:            cfg,
		fn:             fn,
		sides:          readers(cfg),
		rules:          match.Rules{Bounds: cfg.Bounds.core(), Type: match.Type(cfg.Type), Emit: match.Immediate},
		retention:      cfg.StateRetention.Milliseconds(),
		keyIsInterface: reflect.TypeFor[K]().Kind() == reflect.Interface,
		zeroKeyIsEmpty: emptyValue(reflect.Zero(reflect.TypeFor[K]())),
		keys:           newKeyTable[L, R, K](),
		maxTime:        math.MinInt64,
	}, nil
}

// ProcessLeft joins a left element with the right elements buffered under
// its key, buffers it, and returns what fn made of the pairs (in the right
// elements' timestamp order) or, if there were none and the join type is
// LeftOuter or FullOuter, of the element alone.
//
// An element whose key selector returns the zero K gets an error naming
// the left side, and nothing is buffered. If fn fails, ProcessLeft returns
// the records made before the failure and the error wrapped; the element
// stays buffered.
func (j *StreamJoiner[L, R, K, O]) ProcessLeft(l L) ([]O, error) {
	return j.arrive(match.Left, value[L, R]{left: &l})
}

// ProcessRight is ProcessLeft mirrored: it joins a right element with the
// left elements buffered under its key (in their timestamp order), buffers
// it, and emits it alone if it found none and the join type is RightOuter
// or FullOuter.
func (j *StreamJoiner[L, R, K, O]) ProcessRight(r R) ([]O, error) {
	return j.arrive(match.Right, value[L, R]{right: &r})
}

// arrive reads the key and timestamp of v, an element of side s, and
// processes it: ProcessLeft and ProcessRight in one.
func (j *StreamJoiner[L, R, K, O]) arrive(s match.Side, v value[L, R]) ([]O, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	read := j.sides[s]
	k := read.key(v)
	if err := j.checkKey(s, k); err != nil {
		return nil, err
	}
	var ts int64
	if read.time != nil {
		ts = read.time(v)
	} else {
		ts = j.cfg.Clock().UnixMilli()
	}
	return j.process(k, match.Entry[value[L, R]]{Side: s, Time: ts, Value: v})
}

// LeftBufferSize returns the number of left elements buffered, across all
// keys.
func (j *StreamJoiner[L, R, K, O]) LeftBufferSize() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sizes[match.Left]
}

// RightBufferSize returns the number of right elements buffered, across
// all keys.
func (j *StreamJoiner[L, R, K, O]) RightBufferSize() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sizes[match.Right]
}

// Clear empties both buffers and forgets the largest timestamp seen,
// returning the joiner to the state New left it in.
func (j *StreamJoiner[L, R, K, O]) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.keys.clear()
	j.sizes = [2]int{}
	j.maxTime = math.MinInt64
}

// checkKey returns an error if k, from side s's key selector, is no key:
// nil (a nil pointer, or an interface K holding nothing or a nil pointer) or
// the empty string; or, for an interface K, a value that cannot be
// compared and so cannot be a key. Other zero values, such as 0 for an int
// key, are keys like any other.
func (j *StreamJoiner[L, R, K, O]) checkKey(s match.Side, k K) error {
	if j.keyIsInterface {
		v := reflect.ValueOf(k)
		if !v.IsValid() || emptyValue(v) {
			return emptyKey[s]
		}
		if !v.Comparable() {
			return fmt.Errorf("beamjoin: %v key selector returned a key of type %v, which is not comparable", join.Side(s), v.Type())
		}
		return nil
	}
	if j.zeroKeyIsEmpty {
		var zero K
		if k == zero {
			return emptyKey[s]
		}
	}
	return nil
}

// emptyValue reports whether v is nil or the empty string: the Go forms of
// the seed's null key.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return v.IsNil()
	case reflect.String:
		return v.Len() == 0
	}
	return false
}

// process joins e under key k, buffers it, applies the size cap and the
// retention, and then makes the output records.
func (j *StreamJoiner[L, R, K, O]) process(k K, e match.Entry[value[L, R]]) ([]O, error) {
	arrival := j.keys.buffer(k, e.Side, e.Time).Add(j.rules, e)
	j.sizes[e.Side]++
	j.maxTime = max(j.maxTime, e.Time)
	j.evictOldest()
	j.dropRetired()
	// The records are made last, so that a failing fn cannot leave the
	// buffers over their cap; arrival holds the partners even if they were
	// evicted just now.
	n := len(arrival.Partners)
	if arrival.Unmatched {
		n++
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]O, 0, n)
	fail := func(err error) ([]O, error) {
		if len(out) == 0 {
			return nil, err
		}
		return out, err
	}
	for i := range arrival.Partners {
		l, r := &e, &arrival.Partners[i]
		if e.Side == match.Right {
			l, r = r, l
		}
		o, err := j.fn(l.Value.left, r.Value.right)
		if err != nil {
			return fail(fmt.Errorf("beamjoin: join function failed on key %v, left at %d and right at %d: %w", k, l.Time, r.Time, err))
		}
		out = append(out, o)
	}
	if arrival.Unmatched {
		// Only the field of e's side is set: the other side is nil.
		o, err := j.fn(e.Value.left, e.Value.right)
		if err != nil {
			return fail(fmt.Errorf("beamjoin: join function failed on key %v, unmatched %v at %d: %w", k, join.Side(e.Side), e.Time, err))
		}
		out = append(out, o)
	}
	return out, nil
}

// evictOldest removes the oldest elements across all keys, one at a time,
// until the buffers are within MaxStateSize.
func (j *StreamJoiner[L, R, K, O]) evictOldest() {
	for j.sizes[match.Left]+j.sizes[match.Right] > j.cfg.MaxStateSize {
		buf, _, _ := j.keys.oldest()
		j.removed(buf.Evict(j.rules, buf.Len()-1))
	}
}

// dropRetired removes every element older than the largest timestamp seen
// minus StateRetention. Each key with such elements is visited once.
func (j *StreamJoiner[L, R, K, O]) dropRetired() {
	cutoff := int64(math.MinInt64)
	if j.maxTime > math.MinInt64+j.retention {
		cutoff = j.maxTime - j.retention
	}
	for {
		buf, oldest, ok := j.keys.oldest()
		if !ok || oldest >= cutoff {
			return
		}
		j.removed(buf.DropBefore(j.rules, cutoff))
	}
}

// removed accounts for elements that just left the buffer of the key with
// the oldest element.
func (j *StreamJoiner[L, R, K, O]) removed(gone []match.Entry[value[L, R]]) {
	for i := range gone {
		j.sizes[gone[i].Side]--
	}
	j.keys.shrunk()
}
