// This file holds the restriction of a replay and its tracker: a position
// in every file, which only a checkpoint splits.

package jsonl

import "fmt"

// cursor is the restriction of a replay: for each file, the bytes
// [Start, End) still to replay, the first of them starting line number
// Line. ReportBytes is the replay's report rule's amount of data (see
// report), fixed when the replay starts.
type cursor struct {
	Start, End, Line []int64
	ReportBytes      int64
}

// remaining is how many bytes are left to replay.
func (c cursor) remaining() int64 {
	var n int64
	for i := range c.Start {
		n += max(c.End[i]-c.Start[i], 0)
	}
	return n
}

// claim is a line claimed by a replay: line number Line of file File, from
// byte Start to the next line's start, Next. File -1 claims the end of
// every file: the replay is over.
type claim struct {
	File              int
	Start, Next, Line int64
}

// cursorTracker tracks a replay's progress through a cursor. Each file's
// lines must be claimed in order, without a gap. It splits only to
// checkpoint (fraction 0): the replay is one stream, read by one reader.
type cursorTracker struct {
	rest       cursor
	next, line []int64 // per file: start and number of the next line
	done       bool
	err        error
}

func newCursorTracker(c cursor) *cursorTracker {
	return &cursorTracker{rest: c, next: append([]int64(nil), c.Start...), line: append([]int64(nil), c.Line...)}
}

func (t *cursorTracker) TryClaim(p any) bool {
	if t.done || t.err != nil {
		return false
	}
	c := p.(claim)
	if c.File < 0 {
		t.done = true
		return false
	}
	switch {
	case c.File >= len(t.next):
		t.err = fmt.Errorf("beamjoin: replay claimed file %d of %d", c.File, len(t.next))
	case c.Start != t.next[c.File]:
		t.err = fmt.Errorf("beamjoin: replay claimed byte %d of file %d, want %d", c.Start, c.File, t.next[c.File])
	case c.Start >= t.rest.End[c.File]:
		t.err = fmt.Errorf("beamjoin: replay claimed byte %d of file %d, past its end %d", c.Start, c.File, t.rest.End[c.File])
	}
	if t.err != nil {
		return false
	}
	t.next[c.File], t.line[c.File] = c.Next, c.Line+1
	return true
}

func (t *cursorTracker) GetError() error { return t.err }

// TrySplit checkpoints: the primary is what has been claimed, the residual
// the rest of every file. It refuses any other split.
func (t *cursorTracker) TrySplit(fraction float64) (primary, residual any, err error) {
	if fraction > 0 || t.done || t.err != nil {
		return t.rest, nil, nil
	}
	res := cursor{
		Start:       append([]int64(nil), t.next...),
		End:         append([]int64(nil), t.rest.End...),
		Line:        append([]int64(nil), t.line...),
		ReportBytes: t.rest.ReportBytes,
	}
	t.rest.End = append([]int64(nil), t.next...)
	t.done = true
	if res.remaining() == 0 {
		return t.rest, nil, nil
	}
	return t.rest, res, nil
}

func (t *cursorTracker) GetProgress() (done, remaining float64) {
	for i := range t.next {
		done += float64(t.next[i] - t.rest.Start[i])
		remaining += float64(max(t.rest.End[i]-t.next[i], 0))
	}
	return done, remaining
}

func (t *cursorTracker) IsDone() bool {
	if t.done {
		return true
	}
	for i := range t.next {
		if t.next[i] < t.rest.End[i] {
			return false
		}
	}
	return true
}

func (t *cursorTracker) GetRestriction() any { return t.rest }

func (t *cursorTracker) IsBounded() bool { return true }
