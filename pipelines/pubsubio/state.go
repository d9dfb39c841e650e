// This file holds how the read's state is encoded for the runner, which
// keeps it across checkpoints, and across a Flink savepoint or a Dataflow
// update from one release to the next: the restriction (cursor) and the
// watermark estimator state (clock), each in a format that carries its
// version. Golden examples of every format are in testdata/state/.

package pubsubio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// StateVersion is the format version in which this release writes the
// read's restriction and watermark estimator state, and the newest it
// reads. Earlier releases wrote them with Beam's row coder, without a
// version (version 0 below), which this release still reads.
//
// A versioned encoding starts with a zero byte, which no row encoding of
// the unversioned types does (a row starts with its number of fields: 6
// for a cursor, 4 for a clock), then the version as a varint. A release
// that changes a format raises StateVersion, keeps decoding every earlier
// version, and adds a golden file; the runner sees the same opaque coder
// throughout, so it carries the state across the update.
const StateVersion = 1

// encodeCursor encodes a reader's restriction in format StateVersion.
func encodeCursor(c cursor) []byte {
	b := appendVersion(make([]byte, 0, 64+len(c.Subscription)+len(c.Group)+len(c.ID)+len(c.Lease)))
	b = appendString(b, c.Subscription)
	b = appendString(b, c.Group)
	b = binary.AppendVarint(b, int64(c.Reader))
	b = appendString(b, c.ID)
	b = appendString(b, c.Lease)
	b = binary.AppendUvarint(b, uint64(len(c.Emitted)))
	for _, id := range c.Emitted {
		b = appendString(b, id)
	}
	return b
}

// decodeCursor decodes a reader's restriction in any format a release has
// written.
func decodeCursor(b []byte) (cursor, error) {
	r := stateReader{what: "restriction (cursor)", b: b}
	v, err := r.version()
	if err != nil {
		return cursor{}, err
	}
	if v == 0 {
		var old cursorV0
		if err := decodeRow(b, &old); err != nil {
			return cursor{}, r.errorf("unversioned: %v", err)
		}
		return cursor(old), nil
	}
	var c cursor
	c.Subscription = r.string()
	c.Group = r.string()
	c.Reader = int(r.varint())
	c.ID = r.string()
	c.Lease = r.string()
	if n := r.count(); n > 0 {
		c.Emitted = make([]string, n)
		for i := range c.Emitted {
			c.Emitted[i] = r.string()
		}
	}
	return c, r.end()
}

// encodeClock encodes a reader's watermark estimator state in format
// StateVersion.
func encodeClock(c clock) []byte {
	b := appendVersion(make([]byte, 0, 64+16*len(c.Awaited)))
	for _, v := range []int64{c.MaxTime, c.Watermark, c.Quiet, c.Active, c.Base, c.Skew.Ahead, c.Skew.Earliest} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Awaited)))
	for _, a := range c.Awaited {
		b = appendString(b, a.ID)
		b = binary.AppendVarint(b, a.Time)
		b = binary.AppendVarint(b, a.Since)
	}
	return b
}

// decodeClock decodes a reader's watermark estimator state in any format
// a release has written.
func decodeClock(b []byte) (clock, error) {
	r := stateReader{what: "watermark estimator state (clock)", b: b}
	v, err := r.version()
	if err != nil {
		return clock{}, err
	}
	if v == 0 {
		var old clockV0
		if err := decodeRow(b, &old); err != nil {
			return clock{}, r.errorf("unversioned: %v", err)
		}
		return old.upgrade(), nil
	}
	var c clock
	for _, p := range []*int64{&c.MaxTime, &c.Watermark, &c.Quiet, &c.Active, &c.Base, &c.Skew.Ahead, &c.Skew.Earliest} {
		*p = r.varint()
	}
	if n := r.count(); n > 0 {
		c.Awaited = make([]awaited, n)
		for i := range c.Awaited {
			c.Awaited[i] = awaited{ID: r.string(), Time: r.varint(), Since: r.varint()}
		}
	}
	return c, r.end()
}

// cursorV0 is the cursor as releases before StateVersion 1 wrote it, with
// Beam's row coder: the fields, their types and their order are frozen.
type cursorV0 struct {
	Subscription string
	Group        string
	Reader       int
	ID           string
	Lease        string
	Emitted      []string
}

// clockV0 is the clock as releases before StateVersion 1 wrote it, with
// Beam's row coder: the fields, their types and their order are frozen.
type clockV0 struct {
	MaxTime   int64
	ReadAt    int64 // wall clock of the last message read
	Watermark int64
	Awaited   []awaitedV0
}

// awaitedV0 is an awaited message in a clockV0.
type awaitedV0 struct {
	ID    string
	Time  int64
	Since int64 // wall clock of the hand-back
}

// upgrade is the state of version 1 that a reader resumes from: the
// largest time and the watermark as they were. Its quiet time starts
// afresh (version 0 kept when a message was last read, by the wall clock,
// which a pause of the reader's own moved on too), and it waits for the
// awaited messages for a whole redeliveryWait of its bundles.
func (o clockV0) upgrade() clock {
	c := newClock()
	c.MaxTime, c.Watermark = o.MaxTime, o.Watermark
	for _, a := range o.Awaited {
		c.Awaited = append(c.Awaited, awaited{ID: a.ID, Time: a.Time})
	}
	return c
}

// decodeRow decodes b, written by Beam's row coder for a struct of the
// type of *into, into *into.
func decodeRow(b []byte, into any) error {
	t := reflect.TypeOf(into).Elem()
	v, err := beam.NewElementDecoder(t).Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	reflect.ValueOf(into).Elem().Set(reflect.ValueOf(v))
	return nil
}

func appendVersion(b []byte) []byte {
	return binary.AppendUvarint(append(b, 0), StateVersion)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// stateReader reads a versioned encoding, keeping the first error.
type stateReader struct {
	what string
	b    []byte
	off  int
	err  error
}

// version reads the format version: 0 for Beam's row encoding of the
// unversioned types, which starts with a number of fields, never zero.
func (r *stateReader) version() (uint64, error) {
	switch {
	case len(r.b) == 0:
		return 0, r.errorf("empty")
	case r.b[0] != 0:
		return 0, nil
	}
	r.off = 1
	v := r.uvarint()
	switch {
	case r.err != nil:
		return 0, r.err
	case v == 0:
		return 0, r.errorf("invalid state format version 0")
	case v > StateVersion:
		return 0, fmt.Errorf("beamjoin: pubsubio: the read's %s is in state format version %d, newer than version %d, the newest this release reads (was the pipeline updated to an older beamjoin release?)", r.what, v, StateVersion)
	}
	return v, nil
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.err = r.errorf("cut short or corrupt at byte %d", r.off)
		return 0
	}
	r.off += n
	return v
}

func (r *stateReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.err = r.errorf("cut short or corrupt at byte %d", r.off)
		return 0
	}
	r.off += n
	return v
}

// count reads a number of items, each of which takes a byte at least.
func (r *stateReader) count() int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)-r.off) {
		r.err = r.errorf("a count of %d items at byte %d, more than the bytes left", n, r.off)
		return 0
	}
	return int(n)
}

func (r *stateReader) string() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

// end returns the first error, or one if bytes are left over.
func (r *stateReader) end() error {
	if r.err == nil && r.off != len(r.b) {
		r.err = r.errorf("%d bytes left over at byte %d", len(r.b)-r.off, r.off)
	}
	return r.err
}

func (r *stateReader) errorf(format string, args ...any) error {
	return fmt.Errorf("beamjoin: pubsubio: the read's %s (%d bytes): %s", r.what, len(r.b), fmt.Sprintf(format, args...))
}
