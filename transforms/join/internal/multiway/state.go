package multiway

// This file holds how a key's buffer is laid out in its bag state. Each
// bag element is a chunk: a format version byte, then records. A record
// is either the key's progress (tagProgress, a zig-zag varint) or an
// element: a tag byte (its input, and flagMatched once it is in a row),
// its event time as a zig-zag varint, then its value's length and bytes.
// An arrival appends a one-element chunk; a cleanup rewrites the bag as
// one chunk.

import (
	"encoding/binary"
	"fmt"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// Version is the state format version this release writes and reads.
const Version = 1

const (
	tagProgress = 0x7F
	flagMatched = 0x80
	inputMask   = 0x3F
)

// appendElem appends e's record to chunk, starting the chunk if empty.
func appendElem(chunk []byte, e *Elem) []byte {
	if len(chunk) == 0 {
		chunk = append(chunk, Version)
	}
	tag := byte(e.Input)
	if e.Matched {
		tag |= flagMatched
	}
	chunk = append(chunk, tag)
	chunk = binary.AppendVarint(chunk, e.Time)
	chunk = binary.AppendUvarint(chunk, uint64(len(e.Value)))
	return append(chunk, e.Value...)
}

// encode writes b whole as one chunk, or none if it holds nothing.
func encode(b *Buffer) []byte {
	if b.Progress == match.NoProgress && b.Len() == 0 {
		return nil
	}
	chunk := []byte{Version}
	if b.Progress != match.NoProgress {
		chunk = append(chunk, tagProgress)
		chunk = binary.AppendVarint(chunk, b.Progress)
	}
	for _, es := range b.By {
		for _, e := range es {
			chunk = appendElem(chunk, e)
		}
	}
	return chunk
}

// decode rebuilds a key's buffer of n inputs from its bag's chunks.
func decode(n int, chunks [][]byte) (*Buffer, error) {
	b := NewBuffer(n)
	for ci, c := range chunks {
		if len(c) == 0 {
			continue
		}
		if c[0] != Version {
			return nil, fmt.Errorf("beamjoin: join.Multi: state chunk %d has format version %d, this release reads %d", ci, c[0], Version)
		}
		rest := c[1:]
		for len(rest) > 0 {
			tag := rest[0]
			t, k := binary.Varint(rest[1:])
			if k <= 0 {
				return nil, fmt.Errorf("beamjoin: join.Multi: state chunk %d: bad time", ci)
			}
			rest = rest[1+k:]
			if tag == tagProgress {
				b.Progress = max(b.Progress, t)
				continue
			}
			l, k := binary.Uvarint(rest)
			if k <= 0 || uint64(len(rest)-k) < l {
				return nil, fmt.Errorf("beamjoin: join.Multi: state chunk %d: bad value length", ci)
			}
			in := int(tag & inputMask)
			if in >= n {
				return nil, fmt.Errorf("beamjoin: join.Multi: state chunk %d: element of input %d, the join has %d", ci, in+1, n)
			}
			b.Add(&Elem{Input: in, Time: t, Matched: tag&flagMatched != 0, Value: rest[k : k+int(l)]})
			rest = rest[k+int(l):]
		}
	}
	return b, nil
}
