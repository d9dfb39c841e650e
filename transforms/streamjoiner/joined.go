package streamjoiner

// JoinFunc builds one output record from a left and a right element. For a
// pair both are set; for an unmatched element of an outer join the other
// side is nil, so a zero value is never mistaken for an absent one. The
// pointers point at the joiner's own copies of the elements, which stay
// buffered for later pairs: read through them, and copy what you keep,
// but do not write through them.
//
// An error from it is returned, wrapped, by the ProcessLeft or ProcessRight
// call that made it.
type JoinFunc[L, R, O any] func(left *L, right *R) (O, error)

// JoinedElement is a ready-made output record for a JoinFunc that has no
// type of its own to build: the left and right values, either of which may
// be absent (nil), and a timestamp in milliseconds since the Unix epoch.
// A StreamJoiner does not make JoinedElements by itself; a JoinFunc does,
// choosing the timestamp, e.g. the later of the two.
type JoinedElement[L, R any] struct {
	Left      *L
	Right     *R
	Timestamp int64
}

// Joined returns a JoinedElement holding both a left and a right value.
func Joined[L, R any](left L, right R, timestamp int64) JoinedElement[L, R] {
	return JoinedElement[L, R]{Left: &left, Right: &right, Timestamp: timestamp}
}

// LeftOnly returns a JoinedElement holding a left value with no partner.
func LeftOnly[L, R any](left L, timestamp int64) JoinedElement[L, R] {
	return JoinedElement[L, R]{Left: &left, Timestamp: timestamp}
}

// RightOnly returns a JoinedElement holding a right value with no partner.
func RightOnly[L, R any](right R, timestamp int64) JoinedElement[L, R] {
	return JoinedElement[L, R]{Right: &right, Timestamp: timestamp}
}

// IsLeftOnly reports whether e holds a left value and no right one.
func (e JoinedElement[L, R]) IsLeftOnly() bool { return e.Left != nil && e.Right == nil }

// IsRightOnly reports whether e holds a right value and no left one.
func (e JoinedElement[L, R]) IsRightOnly() bool { return e.Left == nil && e.Right != nil }

// IsBothPresent reports whether e holds both a left and a right value.
func (e JoinedElement[L, R]) IsBothPresent() bool { return e.Left != nil && e.Right != nil }
