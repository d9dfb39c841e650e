package streamjoiner

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// ErrEmptyKey is what errors.Is finds in the error of a ProcessLeft or
// ProcessRight call whose key selector returned no key.
var ErrEmptyKey = errors.New("beamjoin: key selector returned an empty key")

// emptyKeyError names the side whose key selector returned no key.
type emptyKeyError struct{ side match.Side }

func (e *emptyKeyError) Error() string {
	return fmt.Sprintf("beamjoin: %v key selector returned an empty key", e.side)
}

func (e *emptyKeyError) Is(target error) bool { return target == ErrEmptyKey }

var emptyKey = [2]error{match.Left: &emptyKeyError{match.Left}, match.Right: &emptyKeyError{match.Right}}

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
		rules:          match.Rules{Bounds: cfg.Window.Bounds(), Type: cfg.Type, Emit: match.Immediate},
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
	j.mu.Lock()
	defer j.mu.Unlock()
	k := j.cfg.LeftKey(l)
	if err := j.checkKey(match.Left, k); err != nil {
		return nil, err
	}
	var ts int64
	if j.cfg.LeftTime != nil {
		ts = j.cfg.LeftTime(l)
	} else {
		ts = j.cfg.Clock().UnixMilli()
	}
	return j.process(k, match.Entry[value[L, R]]{Side: match.Left, Time: ts, Value: value[L, R]{left: &l}})
}

// ProcessRight is ProcessLeft mirrored: it joins a right element with the
// left elements buffered under its key (in their timestamp order), buffers
// it, and emits it alone if it found none and the join type is RightOuter
// or FullOuter.
func (j *StreamJoiner[L, R, K, O]) ProcessRight(r R) ([]O, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := j.cfg.RightKey(r)
	if err := j.checkKey(match.Right, k); err != nil {
		return nil, err
	}
	var ts int64
	if j.cfg.RightTime != nil {
		ts = j.cfg.RightTime(r)
	} else {
		ts = j.cfg.Clock().UnixMilli()
	}
	return j.process(k, match.Entry[value[L, R]]{Side: match.Right, Time: ts, Value: value[L, R]{right: &r}})
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
			return fmt.Errorf("beamjoin: %v key selector returned a key of type %v, which is not comparable", s, v.Type())
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
		p := &arrival.Partners[i]
		var o O
		var err error
		if e.Side == match.Left {
			o, err = j.fn(e.Value.left, p.Value.right)
		} else {
			o, err = j.fn(p.Value.left, e.Value.right)
		}
		if err != nil {
			lt, rt := e.Time, p.Time
			if e.Side == match.Right {
				lt, rt = rt, lt
			}
			return fail(fmt.Errorf("beamjoin: join function failed on key %v, left at %d and right at %d: %w", k, lt, rt, err))
		}
		out = append(out, o)
	}
	if arrival.Unmatched {
		var o O
		var err error
		if e.Side == match.Left {
			o, err = j.fn(e.Value.left, nil)
		} else {
			o, err = j.fn(nil, e.Value.right)
		}
		if err != nil {
			return fail(fmt.Errorf("beamjoin: join function failed on key %v, unmatched %v at %d: %w", k, e.Side, e.Time, err))
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
