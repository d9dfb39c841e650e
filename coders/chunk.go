package coders

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/beamjoin/beamjoin/transforms/join/match"
)

// Record tags of the chunk format. The matched flag is folded into the tag
// byte of an entry.
const (
	tagLeft     = byte(match.Left)
	tagRight    = byte(match.Right)
	tagProgress = 2
	flagMatched = 0x80
)

// AppendEntry appends e to a chunk: a tag byte (side, matched flag), the
// event time as a zig-zag varint, then the value's length and bytes.
func AppendEntry(chunk []byte, e match.Entry[[]byte]) []byte {
	tag := byte(e.Side)
	if e.Matched {
		tag |= flagMatched
	}
	chunk = append(chunk, tag)
	chunk = binary.AppendVarint(chunk, e.Time)
	chunk = binary.AppendUvarint(chunk, uint64(len(e.Value)))
	return append(chunk, e.Value...)
}

// AppendProgress appends a key's cleanup progress to a chunk.
func AppendProgress(chunk []byte, progress int64) []byte {
	chunk = append(chunk, tagProgress)
	return binary.AppendVarint(chunk, progress)
}

// EncodeBuffer returns b as one chunk: its progress (if any), then every
// entry. It is what cleanup writes back to state.
func EncodeBuffer(b *match.Buffer[[]byte]) []byte {
	entries := b.Entries()
	size := 10
	for _, e := range entries {
		size += 12 + len(e.Value)
	}
	chunk := make([]byte, 0, size)
	if b.Progress != match.NoProgress {
		chunk = AppendProgress(chunk, b.Progress)
	}
	for _, e := range entries {
		chunk = AppendEntry(chunk, e)
	}
	return chunk
}

var errTruncated = errors.New("truncated")

// DecodeChunks decodes the chunks of a bag, in order, into a buffer. Entry
// values alias the chunks' bytes. The progress is the largest found, or
// match.NoProgress.
func DecodeChunks(chunks [][]byte) (*match.Buffer[[]byte], error) {
	var entries []match.Entry[[]byte]
	progress := match.NoProgress
	for ci, c := range chunks {
		for off := 0; off < len(c); {
			tag := c[off]
			off++
			t, n := binary.Varint(c[off:])
			if n <= 0 {
				return nil, fmt.Errorf("beamjoin: coders: state chunk %d at byte %d: %w time", ci, off, errTruncated)
			}
			off += n
			switch side := tag &^ flagMatched; side {
			case tagProgress:
				progress = max(progress, t)
			case tagLeft, tagRight:
				l, n := binary.Uvarint(c[off:])
				if n <= 0 || uint64(len(c)-off-n) < l {
					return nil, fmt.Errorf("beamjoin: coders: state chunk %d at byte %d: %w value", ci, off, errTruncated)
				}
				off += n
				v := c[off : off+int(l) : off+int(l)]
				off += int(l)
				entries = append(entries, match.Entry[[]byte]{Side: match.Side(side), Time: t, Matched: tag&flagMatched != 0, Value: v})
			default:
				return nil, fmt.Errorf("beamjoin: coders: state chunk %d at byte %d: unknown tag %#x", ci, off-1-n, tag)
			}
		}
	}
	return match.Restore(entries, progress), nil
}
