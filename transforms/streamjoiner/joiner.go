package streamjoiner

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
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

// ErrUnusableKey is what errors.Is finds in the error of a ProcessLeft or
// ProcessRight call whose key selector returned a key that cannot be one:
// a key holding a value that cannot be compared (a slice, map or func in
// an interface, or in an interface field of a struct key), which a Go map
// cannot hash, or a key holding a NaN, which equals no key, itself
// included, so that nothing could ever match it.
var ErrUnusableKey = errors.New("beamjoin: key selector returned a key that cannot be used")

// unusableKeyError says why a side's key cannot be used.
type unusableKeyError struct {
	side join.Side
	why  string
}

func (e *unusableKeyError) Error() string {
	return fmt.Sprintf("beamjoin: %v key selector returned a key %s", e.side, e.why)
}

func (e *unusableKeyError) Is(target error) bool { return target == ErrUnusableKey }

// StreamJoiner joins two streams fed to it one element at a time, in
// memory: each element is matched against the other side's buffered
// elements with the same key, then buffered itself. See the package
// documentation for what it emits and when it forgets.
//
// A StreamJoiner is safe for concurrent use. Its methods take turns, so the
// functions given to New are never called concurrently by
// one joiner.
type StreamJoiner[K comparable, L, R, O any] struct {
	cfg       settings[K, L, R]
	fn        JoinFunc[L, R, O]
	sides     [2]reader[K, L, R]
	rules     match.Rules
	retention int64 // StateRetention in milliseconds
	// keyIsInterface: a K that is an interface type can hold a nil pointer
	// or a zero value that == cannot see.
	keyIsInterface bool
	// keyHoldsInterface: K, a struct or array, has an interface in it,
	// which may hold a value that cannot be compared or hashed.
	keyHoldsInterface bool
	// keyMayBeNaN: K is or holds a float, or an interface that may hold one.
	keyMayBeNaN bool
	// zeroKeyIsEmpty: K's zero value is nil or the empty string.
	zeroKeyIsEmpty bool

	mu      sync.Mutex
	keys    keyTable[K, L, R]
	sizes   [2]int // buffered elements per side
	maxTime int64  // the largest timestamp seen, or math.MinInt64
	stats   Stats  // Buffered is filled in by Stats
}

// value is one buffered element of either side; only the field of its
// side is set. Elements are held by pointer, which keeps the core's
// entries small, so that moving them is cheap.
type value[L, R any] struct {
	left  *L
	right *R
}

// reader reads the key and the timestamp of one side's elements, with that
// side's functions given to New: all that tells the sides apart.
type reader[K comparable, L, R any] struct {
	key  func(value[L, R]) K
	time func(value[L, R]) int64 // nil: stamp with the clock
}

// readers returns the readers of the two sides.
func readers[K comparable, L, R any](cfg settings[K, L, R]) [2]reader[K, L, R] {
	var rs [2]reader[K, L, R]
	rs[match.Left].key = func(v value[L, R]) K { return cfg.leftKey(*v.left) }
	rs[match.Right].key = func(v value[L, R]) K { return cfg.rightKey(*v.right) }
	if cfg.leftTime != nil {
		rs[match.Left].time = func(v value[L, R]) int64 { return cfg.leftTime(*v.left) }
	}
	if cfg.rightTime != nil {
		rs[match.Right].time = func(v value[L, R]) int64 { return cfg.rightTime(*v.right) }
	}
	return rs
}

// New returns a joiner that reads keys with leftKey and rightKey and makes
// its records with fn, configured by opts; Between is required:
//
//	j, err := streamjoiner.New(
//		func(o Order) string { return o.UserID },
//		func(u User) string { return u.ID },
//		func(o *Order, u *User) (Enriched, error) { return Enriched{o.ID, u.Name}, nil },
//		streamjoiner.Between(-10*time.Second, 10*time.Second),
//		streamjoiner.JoinType(join.LeftOuter))
//
// It checks the options once; the errors name the option at fault.
func New[K comparable, L, R, O any](leftKey func(L) K, rightKey func(R) K, fn JoinFunc[L, R, O], opts ...Option) (*StreamJoiner[K, L, R, O], error) {
	cfg, err := newSettings(leftKey, rightKey, opts)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, fmt.Errorf("beamjoin: streamjoiner.New: the join function is nil")
	}
	kt := reflect.TypeFor[K]()
	return &StreamJoiner[K, L, R, O]{
		cfg:               cfg,
		fn:                fn,
		sides:             readers(cfg),
		rules:             match.Rules{Bounds: cfg.bounds, Type: match.Type(cfg.typ), Emit: match.Immediate},
		retention:         cfg.retention.Milliseconds(),
		keyIsInterface:    kt.Kind() == reflect.Interface,
		keyHoldsInterface: kt.Kind() != reflect.Interface && holds(kt, reflect.Interface),
		keyMayBeNaN:       holds(kt, reflect.Interface, reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128),
		zeroKeyIsEmpty:    emptyValue(reflect.Zero(kt)),
		keys:              newKeyTable[K, L, R](),
		maxTime:           math.MinInt64,
	}, nil
}

// ProcessLeft joins a left element with the right elements buffered under
// its key, buffers it, and returns what fn made of the pairs (in the right
// elements' timestamp order) or, if there were none and the join type is
// LeftOuter or FullOuter, of the element alone.
//
// An element whose key selector returns no usable key gets an error naming
// the left side, and nothing is buffered. If fn fails, ProcessLeft returns
// no records and the error wrapped, and the call has changed nothing: the
// element is not buffered, and nothing was evicted or dropped for it, so
// calling again with the same element makes no pair twice.
func (j *StreamJoiner[K, L, R, O]) ProcessLeft(l L) ([]O, error) {
	return j.arrive(match.Left, value[L, R]{left: &l})
}

// ProcessRight is ProcessLeft mirrored: it joins a right element with the
// left elements buffered under its key (in their timestamp order), buffers
// it, and emits it alone if it found none and the join type is RightOuter
// or FullOuter.
func (j *StreamJoiner[K, L, R, O]) ProcessRight(r R) ([]O, error) {
	return j.arrive(match.Right, value[L, R]{right: &r})
}

// arrive reads the key and timestamp of v, an element of side s, and
// processes it: ProcessLeft and ProcessRight in one.
func (j *StreamJoiner[K, L, R, O]) arrive(s match.Side, v value[L, R]) ([]O, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	read := j.sides[s]
	k := read.key(v)
	if err := j.checkKey(s, k); err != nil {
		j.stats.side(s).Rejected++
		return nil, err
	}
	var ts int64
	if read.time != nil {
		ts = read.time(v)
	} else {
		ts = j.cfg.clock().UnixMilli()
	}
	return j.process(k, match.Entry[value[L, R]]{Side: s, Time: ts, Value: v})
}

// LeftBufferSize returns the number of left elements buffered, across all
// keys.
func (j *StreamJoiner[K, L, R, O]) LeftBufferSize() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sizes[match.Left]
}

// RightBufferSize returns the number of right elements buffered, across
// all keys.
func (j *StreamJoiner[K, L, R, O]) RightBufferSize() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sizes[match.Right]
}

// Clear empties both buffers and forgets the largest timestamp seen,
// returning the joiner's buffers to the state New left them in. Stats keeps
// counting: the elements Clear removes are counted as Cleared.
func (j *StreamJoiner[K, L, R, O]) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stats.Left.Cleared += int64(j.sizes[match.Left])
	j.stats.Right.Cleared += int64(j.sizes[match.Right])
	j.keys.clear()
	j.sizes = [2]int{}
	j.maxTime = math.MinInt64
}

// checkKey returns an error if k, from side s's key selector, is no key:
// nil (a nil pointer, or an interface K holding nothing or a nil pointer) or
// the empty string. Other zero values, such as 0 for an int key, are keys
// like any other. It also returns an error for a key that cannot be used
// (ErrUnusableKey): one holding a value that cannot be compared, which a
// map access would panic on, or a NaN, which no key equals.
func (j *StreamJoiner[K, L, R, O]) checkKey(s match.Side, k K) error {
	if j.keyIsInterface {
		v := reflect.ValueOf(k)
		if !v.IsValid() || emptyValue(v) {
			return emptyKey[s]
		}
	}
	if j.keyIsInterface || j.keyHoldsInterface {
		if why := incomparable(reflect.ValueOf(k), ""); why != "" {
			return &unusableKeyError{side: join.Side(s), why: why}
		}
	}
	if j.keyMayBeNaN && k != k {
		return &unusableKeyError{side: join.Side(s), why: "that holds a NaN, which equals no key, so nothing could ever match it"}
	}
	if j.zeroKeyIsEmpty && !j.keyIsInterface {
		var zero K
		if k == zero {
			return emptyKey[s]
		}
	}
	return nil
}

// incomparable says where v, a key or a part of it at path, holds a value
// that cannot be compared, or returns "".
func incomparable(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return incomparable(v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if path != "" {
				name = path + "." + name
			}
			if why := incomparable(v.Field(i), name); why != "" {
				return why
			}
		}
		return ""
	case reflect.Array:
		for i := range v.Len() {
			if why := incomparable(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); why != "" {
				return why
			}
		}
		return ""
	}
	if v.Comparable() {
		return ""
	}
	if path == "" {
		return fmt.Sprintf("of type %v, which is not comparable", v.Type())
	}
	return fmt.Sprintf("with a %v at %s, which is not comparable", v.Type(), path)
}

// holds reports whether t is, or has in it, a type of one of the kinds:
// as a field of a struct or an element of an array, the parts of a
// comparable type.
func holds(t reflect.Type, kinds ...reflect.Kind) bool {
	if slices.Contains(kinds, t.Kind()) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if holds(t.Field(i).Type, kinds...) {
				return true
			}
		}
	case reflect.Array:
		return holds(t.Elem(), kinds...)
	}
	return false
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

// process makes e's records, joining it under key k, and only then, if
// they could all be made, buffers e and applies the size cap and the
// retention: a failing fn leaves no trace.
func (j *StreamJoiner[K, L, R, O]) process(k K, e match.Entry[value[L, R]]) ([]O, error) {
	var partners []match.Entry[value[L, R]]
	if buf, ok := j.keys.lookup(k); ok {
		partners = buf.Partners(j.rules, e.Side, e.Time)
	}
	unmatched := j.rules.UnmatchedOnArrival(e.Side, len(partners) > 0)
	out, err := j.records(k, e, partners, unmatched)
	st := j.stats.side(e.Side)
	if err != nil {
		st.Rejected++
		return nil, err
	}
	st.In++
	j.stats.Pairs += int64(len(partners))
	if len(partners) > 0 {
		st.Matched++
	}
	if unmatched {
		st.Unmatched++
	}
	other := j.stats.side(e.Side.Other())
	outer := j.rules.Type.Outer(e.Side.Other())
	for i := range partners {
		if !partners[i].Matched {
			other.Matched++
			if outer {
				other.MatchedAfterUnmatched++
			}
		}
	}
	// Add pairs e with the partners found above and marks them matched.
	j.keys.buffer(k, e.Side, e.Time).Add(j.rules, e)
	j.sizes[e.Side]++
	j.maxTime = max(j.maxTime, e.Time)
	j.evictOldest()
	j.dropRetired()
	return out, nil
}

// records calls fn for e's pairs with partners and, if unmatched, for e
// alone.
func (j *StreamJoiner[K, L, R, O]) records(k K, e match.Entry[value[L, R]], partners []match.Entry[value[L, R]], unmatched bool) ([]O, error) {
	n := len(partners)
	if unmatched {
		n++
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]O, 0, n)
	for i := range partners {
		l, r := &e, &partners[i]
		if e.Side == match.Right {
			l, r = r, l
		}
		o, err := j.fn(l.Value.left, r.Value.right)
		if err != nil {
			return nil, fmt.Errorf("beamjoin: join function failed on key %v, left at %d and right at %d: %w", k, l.Time, r.Time, err)
		}
		out = append(out, o)
	}
	if unmatched {
		// Only the field of e's side is set: the other side is nil.
		o, err := j.fn(e.Value.left, e.Value.right)
		if err != nil {
			return nil, fmt.Errorf("beamjoin: join function failed on key %v, unmatched %v at %d: %w", k, join.Side(e.Side), e.Time, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// evictOldest removes the oldest elements across all keys, one at a time,
// until the buffers are within MaxStateSize.
func (j *StreamJoiner[K, L, R, O]) evictOldest() {
	for j.sizes[match.Left]+j.sizes[match.Right] > j.cfg.maxStateSize {
		buf, _, _ := j.keys.oldest()
		j.removed(buf.Evict(j.rules, buf.Len()-1), true)
	}
}

// dropRetired removes every element older than the largest timestamp seen
// minus StateRetention. Each key with such elements is visited once.
func (j *StreamJoiner[K, L, R, O]) dropRetired() {
	cutoff := int64(math.MinInt64)
	if j.maxTime > math.MinInt64+j.retention {
		cutoff = j.maxTime - j.retention
	}
	for {
		buf, oldest, ok := j.keys.oldest()
		if !ok || oldest >= cutoff {
			return
		}
		j.removed(buf.DropBefore(j.rules, cutoff), false)
	}
}

// removed accounts for elements that just left the buffer of the key with
// the oldest element, evicted by the size cap or dropped by the retention.
func (j *StreamJoiner[K, L, R, O]) removed(gone []match.Entry[value[L, R]], evicted bool) {
	for i := range gone {
		s := gone[i].Side
		j.sizes[s]--
		if evicted {
			j.stats.side(s).Evicted++
		} else {
			j.stats.side(s).Dropped++
		}
	}
	j.keys.shrunk()
}
