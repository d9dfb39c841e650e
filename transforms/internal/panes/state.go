package panes

// This file holds the bytes of a key's state and of a pane. A bag element
// is a chunk: a run of records, each an entry or the key's progress. An
// arrival appends a one-entry chunk; a firing that changes the state
// rewrites it as one chunk, so that a rewrite costs one state append.
//
// A chunk may begin with a version record: the state format version of
// the records in that chunk. A chunk without one is version 1, the format
// of every release before versions were recorded, which is also the
// format this release writes (Version). A rewrite (State.Encode) starts
// with a version record; an arrival's one-entry chunk (AppendEntry) leaves
// it out, which would cost two bytes an element. The version is per
// chunk, not per bag: an arrival appends to a bag it has not read, and a
// bag may hold chunks of two releases after an update. A release that
// changes the format raises Version, starts every chunk it writes with a
// version record, and keeps decoding every earlier version
// (testdata/state/ holds golden examples); a chunk of a version newer than
// Version is refused with an error naming both versions.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// The first byte of a record: an entry's side in bit 0 and its flags, or
// the progress tag.
const (
	flagJudged  = 0x02
	flagMatched = 0x04
	flagFrom    = 0x08
	flagThrough = 0x10
	flagNew     = 0x20 // panes only
	tagVersion  = 0x40
	tagProgress = 0x80
)

// Version is the state format version this release writes, and the
// newest it reads.
const Version = 1

// AppendEntry appends e to a chunk: a tag byte (side, flags), the event
// time, From and Through when set (zig-zag varints), then the value's
// length and bytes.
func AppendEntry(chunk []byte, e Entry) []byte { return appendEntry(chunk, e, 0) }

func appendEntry(chunk []byte, e Entry, flags byte) []byte {
	tag := byte(e.Side) | flags
	if e.Judged {
		tag |= flagJudged
	}
	if e.Matched {
		tag |= flagMatched
	}
	if e.From != NoTime {
		tag |= flagFrom
	}
	if e.Through != NoTime {
		tag |= flagThrough
	}
	chunk = append(chunk, tag)
	chunk = binary.AppendVarint(chunk, e.Time)
	if e.From != NoTime {
		chunk = binary.AppendVarint(chunk, e.From)
	}
	if e.Through != NoTime {
		chunk = binary.AppendVarint(chunk, e.Through)
	}
	chunk = binary.AppendUvarint(chunk, uint64(len(e.Value)))
	return append(chunk, e.Value...)
}

// Encode writes the whole state as one chunk, starting with a version
// record; nil for an empty state.
func (st State) Encode() []byte {
	if st.Progress == NoTime && len(st.Entries) == 0 {
		return nil
	}
	chunk := binary.AppendVarint([]byte{tagVersion}, Version)
	if st.Progress != NoTime {
		chunk = append(chunk, tagProgress)
		chunk = binary.AppendVarint(chunk, st.Progress)
	}
	for _, e := range st.Entries {
		chunk = AppendEntry(chunk, e)
	}
	return chunk
}

// Decode reads a key's state from its bag's chunks. Values alias the
// chunks. A chunk of a format version newer than Version, or a version
// record anywhere but at a chunk's start, is an error.
func Decode(chunks [][]byte) (State, error) {
	st := State{Progress: NoTime}
	for i, c := range chunks {
		start := len(c)
		for len(c) > 0 {
			if c[0] == tagVersion {
				if len(c) != start {
					return st, fmt.Errorf("beamjoin: window state chunk %d: a format version record not at the start of its chunk", i)
				}
				v, n := binary.Varint(c[1:])
				switch {
				case n <= 0:
					return st, errCorrupt("format version")
				case v > Version:
					return st, fmt.Errorf("beamjoin: window state chunk %d is in state format version %d, newer than version %d, the newest this release reads (was the pipeline updated to an older beamjoin release?)", i, v, Version)
				case v < 1:
					return st, fmt.Errorf("beamjoin: window state chunk %d: invalid state format version %d", i, v)
				}
				c = c[1+n:]
				continue
			}
			if c[0] == tagProgress {
				p, n := binary.Varint(c[1:])
				if n <= 0 {
					return st, errCorrupt("progress")
				}
				st.Progress = max(st.Progress, p)
				c = c[1+n:]
				continue
			}
			e, _, rest, err := readEntry(c)
			if err != nil {
				return st, err
			}
			st.Entries = append(st.Entries, e)
			c = rest
		}
	}
	return st, nil
}

func readEntry(c []byte) (e Entry, isNew bool, rest []byte, err error) {
	tag := c[0]
	if tag&^(1|flagJudged|flagMatched|flagFrom|flagThrough|flagNew) != 0 {
		return e, false, nil, errCorrupt(fmt.Sprintf("record tag %#x", tag))
	}
	e = Entry{Side: match.Side(tag & 1), Judged: tag&flagJudged != 0, Matched: tag&flagMatched != 0, From: NoTime, Through: NoTime}
	c = c[1:]
	read := func(what string, dst *int64) error {
		v, n := binary.Varint(c)
		if n <= 0 {
			return errCorrupt(what)
		}
		*dst, c = v, c[n:]
		return nil
	}
	if err := read("entry time", &e.Time); err != nil {
		return e, false, nil, err
	}
	if tag&flagFrom != 0 {
		if err := read("entry window", &e.From); err != nil {
			return e, false, nil, err
		}
	}
	if tag&flagThrough != 0 {
		if err := read("entry pane", &e.Through); err != nil {
			return e, false, nil, err
		}
	}
	size, n := binary.Uvarint(c)
	if n <= 0 || uint64(len(c)-n) < size {
		return e, false, nil, errCorrupt("entry value")
	}
	c = c[n:]
	e.Value = c[:size:size]
	return e, tag&flagNew != 0, c[size:], nil
}

// EncodePane writes a pane's entries, with their New flags, as one chunk.
func EncodePane(p Pane) []byte {
	var chunk []byte
	for i, e := range p.Entries {
		var flags byte
		if p.New[i] {
			flags = flagNew
		}
		chunk = appendEntry(chunk, e, flags)
	}
	return chunk
}

// DecodePane reads the entries of a pane written by EncodePane, and which
// are new. Values alias b.
func DecodePane(b []byte) (entries []Entry, isNew []bool, err error) {
	for len(b) > 0 {
		e, n, rest, err := readEntry(b)
		if err != nil {
			return nil, nil, err
		}
		entries, isNew, b = append(entries, e), append(isNew, n), rest
	}
	return entries, isNew, nil
}

func errCorrupt(what string) error {
	return errors.New("beamjoin: corrupt window state: bad " + what)
}
