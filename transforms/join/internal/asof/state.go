package asof

// This file holds how the as-of join keeps a key in Beam state: one bag of
// chunks, each a run of records (a progress, a version or a pending left
// element). An arrival appends one chunk; a timer firing reads the bag and
// rewrites it as one chunk.

import (
	"encoding/binary"
	"fmt"
)

// The record kinds of an as-of state chunk.
const (
	recProgress byte = 1 + iota
	recVersion
	recLeft
)

// stateVersion is the format version written at the start of every
// chunk, so that a later format can tell old state apart.
const stateVersion byte = 1

// appendRecord appends one record to a chunk (which starts with the
// format version).
func appendRecord(chunk []byte, kind byte, e entry) []byte {
	if len(chunk) == 0 {
		chunk = append(chunk, stateVersion)
	}
	chunk = append(chunk, kind)
	chunk = binary.AppendVarint(chunk, e.Time)
	if kind != recProgress {
		chunk = binary.AppendUvarint(chunk, uint64(len(e.Value)))
		chunk = append(chunk, e.Value...)
	}
	return chunk
}

// encodeKey writes the whole key as one chunk.
func encodeKey(k *keyState) []byte {
	chunk := appendRecord(nil, recProgress, entry{Time: k.Progress})
	for _, v := range k.Versions {
		chunk = appendRecord(chunk, recVersion, v)
	}
	for _, l := range k.Pending {
		chunk = appendRecord(chunk, recLeft, l)
	}
	return chunk
}

// decodeKey rebuilds a key from its bag's chunks, in the order they
// were appended. Versions go through addVersion, so that of two at one
// time the one that supersedes the other is kept, whatever the order.
func decodeKey(r Rules, chunks [][]byte) (*keyState, error) {
	k := newKeyState()
	noRetract := r
	noRetract.Retract = false
	for ci, c := range chunks {
		if len(c) == 0 {
			continue
		}
		if c[0] != stateVersion {
			return nil, fmt.Errorf("beamjoin: join.AsOf: state chunk %d has format version %d, want %d", ci, c[0], stateVersion)
		}
		b := c[1:]
		for len(b) > 0 {
			kind := b[0]
			t, n := binary.Varint(b[1:])
			if n <= 0 {
				return nil, fmt.Errorf("beamjoin: join.AsOf: state chunk %d: bad time", ci)
			}
			b = b[1+n:]
			var e entry
			e.Time = t
			if kind != recProgress {
				l, n := binary.Uvarint(b)
				if n <= 0 || uint64(len(b)-n) < l {
					return nil, fmt.Errorf("beamjoin: join.AsOf: state chunk %d: bad value length", ci)
				}
				e.Value = b[n : n+int(l)]
				b = b[n+int(l):]
			}
			switch kind {
			case recProgress:
				k.Progress = max(k.Progress, t)
			case recVersion:
				k.addVersion(noRetract, e)
			case recLeft:
				k.Pending = append(k.Pending, e)
			default:
				return nil, fmt.Errorf("beamjoin: join.AsOf: state chunk %d: unknown record kind %d", ci, kind)
			}
		}
	}
	return k, nil
}
