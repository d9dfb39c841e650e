// Package bagstate is the interval join's state format: how a key's
// buffer is laid out in the bytes of its bag state.
//
// A bag element holds one chunk: a run of buffered entries (side, event
// time, matched flag, value encoded with the input's own Beam coder),
// optionally the key's cleanup progress and cleanup records. Arrivals
// append a one-entry chunk (AppendEntry); cleanup rewrites the bag as one
// chunk (EncodeState), or as several of bounded size (EncodeChunks), or
// appends a cleanup record (AppendCleanup) that says the entries before it
// were cleaned up at a time, without rewriting them. Keeping many entries
// per bag element is what lets a rewrite cost one state append instead of
// one per surviving element.
//
// The split layout (join.SplitKeys) uses the same records in two bags: a
// bucket's bag holds its entries; a key's first-stage bag holds
// value-less entries that mark the runs of cleanup times its elements
// expire at, its progress, and a cleanup record per tick. A key of the
// default layout that went hot (join.HotKeyThreshold) holds a split record
// in its bag, the time from which its elements are split (SplitChunk),
// and its ticks in a second bag. A directory of time buckets (Bucket), the
// map-state layout of earlier releases, is still decoded.
//
// # Format version
//
// A chunk may begin with a version record: the state format version of
// the records in that chunk. A chunk without one is version 1, the
// format of every release before versions were recorded, which is also
// the format this release writes (Version). This release starts every
// chunk it writes whole (EncodeState, EncodeEntries) with a version
// record, and leaves it out of the small chunks an arrival or cleanup
// firing appends (AppendEntry, AppendCleanup), which would otherwise pay
// two bytes per element for it. The version is per chunk, not per bag,
// because a cleanup firing appends to a bag it has not read, and a bag
// may hold chunks of two releases after an update.
//
// A release that changes the format raises Version and starts every chunk
// it writes, appended ones too, with a version record, unless the chunk
// means the same in the earlier version (version 2 added the split record
// and nothing else: every chunk without one is still written as version
// 1); it keeps decoding every earlier version, which testdata/state/
// holds golden examples of.
// A chunk of a version newer than Version is refused with an error naming
// both versions (a pipeline updated back to an older release).
package bagstate

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// Record tags of the chunk format. The matched flag is folded into the tag
// byte of an entry.
const (
	tagLeft     = byte(match.Left)
	tagRight    = byte(match.Right)
	tagProgress = 2
	tagBucket   = 3
	tagCleanup  = 4
	tagVersion  = 5
	tagSplit    = 6
	flagMatched = 0x80
)

// Version is the newest state format version this release reads and
// writes. A chunk without a version record is version 1. Version 2 adds the
// split record (SplitChunk), which only a chunk of version 2 holds: every
// other chunk means the same in both versions and is still written as
// version 1 (Version1), so that an older release reads the bags of every
// key that never went hot and refuses, by version, those of a key that did.
const Version = 2

// Version1 is the version of the chunks this release writes whole that
// hold no split record (EncodeState, EncodeChunks).
const Version1 = 1

// MaxValue is the most bytes the joins write in one state value when they
// rewrite a bag (EncodeChunks' limit): a key or bucket rewritten by
// cleanup, a bounded path's gathered values, is written as chunks of at
// most this size (an element larger than it alone in its chunk). A
// mebibyte is far under the 80 MB Dataflow's Streaming Engine takes in one
// value and the roughly 180 MB it takes in one key's commit, and under the
// 2 GiB RocksDB takes in one value on Flink, where a bag is one merged
// value: there the size of a key's or bucket's whole bag counts, which
// the split layout's bucket width bounds.
const MaxValue = 1 << 20

// AppendVersion appends a version record to an empty chunk: a tag byte and
// the version as a zig-zag varint. A version record stands only at the
// start of a chunk.
func AppendVersion(chunk []byte, version int64) []byte {
	chunk = append(chunk, tagVersion)
	return binary.AppendVarint(chunk, version)
}

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

// AppendCleanup appends a cleanup record to a chunk: a cleanup timer for
// time at fired, and the entries before the record in the bag that expire
// by then are removed, though still there. The reader of the bag decides
// which timer the record was for (see State.Cleanups).
func AppendCleanup(chunk []byte, at int64) []byte {
	chunk = append(chunk, tagCleanup)
	return binary.AppendVarint(chunk, at)
}

// SplitChunk is a chunk of its own (version 2) that records that a key of
// the interval join went hot: its elements from time at on are split over
// time buckets (the split layout), those before it stay in the key's bag.
// The latest split record of a bag is the key's (State.Split).
func SplitChunk(at int64) []byte {
	chunk := AppendVersion(make([]byte, 0, 16), 2)
	chunk = append(chunk, tagSplit)
	return binary.AppendVarint(chunk, at)
}

// Bucket describes one time bucket of a key's buffer in the interval
// join's map-state layout of earlier releases, where entries lived in a
// state.Map under their bucket's ID and the key's bag held this
// directory: per side, how many entries the bucket holds and the earliest
// time among them. This release decodes it and writes it only in tests of
// the format.
type Bucket struct {
	ID     int64
	Count  [2]int
	Oldest [2]int64 // meaningful only where Count > 0
}

// Len returns the bucket's entries on both sides.
func (b Bucket) Len() int { return b.Count[0] + b.Count[1] }

// AppendBucket appends a directory record to a chunk: a tag byte, the
// bucket ID as a zig-zag varint, the two counts, then the oldest time of
// each side that has entries.
func AppendBucket(chunk []byte, b Bucket) []byte {
	chunk = append(chunk, tagBucket)
	chunk = binary.AppendVarint(chunk, b.ID)
	for s := range b.Count {
		chunk = binary.AppendUvarint(chunk, uint64(b.Count[s]))
	}
	for s := range b.Count {
		if b.Count[s] > 0 {
			chunk = binary.AppendVarint(chunk, b.Oldest[s])
		}
	}
	return chunk
}

// State is a key's bag decoded: its cleanup progress (or
// match.NoProgress), the entries kept in the bag, in bag order, the
// directory of its buckets (empty in the bag-only layout), in bag order,
// its cleanup records, in bag order, and the time from which the key is
// split (its latest split record, SplitChunk), or match.NoProgress.
type State struct {
	Progress int64
	Entries  []match.Entry[[]byte]
	Buckets  []Bucket
	Cleanups []Cleanup
	Split    int64
}

// Cleanup is a cleanup record (AppendCleanup) where it stands in the bag:
// the time its timer fired, how many of State.Entries came before it, and
// the largest progress recorded before it (or match.NoProgress). The
// progress of State is that of the progress records alone: what cleanup
// records remove is for the reader to apply.
type Cleanup struct {
	At       int64
	Entries  int
	Progress int64
}

// EncodeState returns a key's bag as one chunk: the version record,
// progress (if any), the directory, then the entries. It is what a rewrite
// writes back to state.
func EncodeState(progress int64, buckets []Bucket, entries []match.Entry[[]byte]) []byte {
	size := 12 + 40*len(buckets)
	for _, e := range entries {
		size += 12 + len(e.Value)
	}
	chunk := AppendVersion(make([]byte, 0, size), Version1)
	if progress != match.NoProgress {
		chunk = AppendProgress(chunk, progress)
	}
	for _, b := range buckets {
		chunk = AppendBucket(chunk, b)
	}
	for _, e := range entries {
		chunk = AppendEntry(chunk, e)
	}
	return chunk
}

// EncodeChunks returns a key's bag as chunks of at most limit bytes each,
// each as EncodeState writes one: the first holds the progress (if any)
// and the entries that fit, each further one the entries that fit after;
// an entry that alone exceeds the limit has a chunk of its own. With no
// progress and no entries there are no chunks.
func EncodeChunks(progress int64, entries []match.Entry[[]byte], limit int) [][]byte {
	var out [][]byte
	start, size := 0, chunkBytes(progress)
	for i, e := range entries {
		n := entryBytes(e)
		if size+n > limit && (i > start || len(out) == 0 && progress != match.NoProgress) {
			out = append(out, EncodeState(progress, nil, entries[start:i]))
			progress = match.NoProgress
			start, size = i, chunkBytes(progress)
		}
		size += n
	}
	if start < len(entries) || progress != match.NoProgress {
		out = append(out, EncodeState(progress, nil, entries[start:]))
	}
	return out
}

// chunkBytes is the size of a chunk's version record and progress record
// (if any).
func chunkBytes(progress int64) int {
	n := 1 + varintBytes(Version1)
	if progress != match.NoProgress {
		n += 1 + varintBytes(progress)
	}
	return n
}

// entryBytes is the size of an entry's record (AppendEntry).
func entryBytes(e match.Entry[[]byte]) int {
	return 1 + varintBytes(e.Time) + uvarintBytes(uint64(len(e.Value))) + len(e.Value)
}

func varintBytes(x int64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutVarint(b[:], x)
}

func uvarintBytes(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

// EncodeEntries returns entries as one chunk, as a bucket's value in the
// map-state layout of earlier releases.
func EncodeEntries(entries []match.Entry[[]byte]) []byte {
	return EncodeState(match.NoProgress, nil, entries)
}

var errTruncated = errors.New("truncated")

// DecodeChunks decodes the chunks of a bag, in order, into a buffer. Entry
// values alias the chunks' bytes. The progress is the largest found, or
// match.NoProgress. A bag that holds a bucket directory is refused: its
// buffer is not all in the bag (use DecodeState).
func DecodeChunks(chunks [][]byte) (*match.Buffer[[]byte], error) {
	st, err := DecodeState(chunks)
	if err != nil {
		return nil, err
	}
	if len(st.Buckets) > 0 {
		return nil, fmt.Errorf("beamjoin: bagstate: state holds %d bucket records: its entries are not all in these chunks", len(st.Buckets))
	}
	if len(st.Cleanups) > 0 {
		return nil, fmt.Errorf("beamjoin: bagstate: state holds %d cleanup records: its entries are not all live", len(st.Cleanups))
	}
	return match.Restore(st.Entries, st.Progress), nil
}

// DecodeEntries decodes a bucket's value, one chunk of entries.
func DecodeEntries(chunk []byte) ([]match.Entry[[]byte], error) {
	st, err := DecodeState([][]byte{chunk})
	if err != nil {
		return nil, err
	}
	if len(st.Buckets) > 0 || len(st.Cleanups) > 0 || st.Progress != match.NoProgress {
		return nil, fmt.Errorf("beamjoin: bagstate: a bucket holds a directory, progress or cleanup record")
	}
	return st.Entries, nil
}

// DecodeState decodes the chunks of a bag, in order. Entry values alias the
// chunks' bytes. The progress is the largest found. A bucket recorded more
// than once keeps its last record. A chunk of a format version newer than
// Version, or a version record anywhere but at a chunk's start, is an
// error.
func DecodeState(chunks [][]byte) (State, error) {
	st := State{Progress: match.NoProgress, Split: match.NoProgress}
	var at map[int64]int // bucket ID -> index in st.Buckets, once there are repeats to detect
	for ci, c := range chunks {
		version := int64(1)
		for off := 0; off < len(c); {
			tag := c[off]
			off++
			t, n := binary.Varint(c[off:])
			if n <= 0 {
				return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte %d: %w time", ci, off, errTruncated)
			}
			off += n
			switch side := tag &^ flagMatched; side {
			case tagVersion:
				if off != 1+n {
					return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte %d: a format version record not at the start of its chunk", ci, off-1-n)
				}
				if t > Version {
					return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d is in state format version %d, newer than version %d, the newest this release reads (was the pipeline updated to an older beamjoin release?)", ci, t, Version)
				}
				if t < 1 {
					return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte 0: invalid state format version %d", ci, t)
				}
				version = t
			case tagProgress:
				st.Progress = max(st.Progress, t)
			case tagSplit:
				if version < 2 {
					return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte %d: a split record in a chunk of format version %d (only version 2 has them)", ci, off-1-n, version)
				}
				st.Split = t
			case tagCleanup:
				st.Cleanups = append(st.Cleanups, Cleanup{At: t, Entries: len(st.Entries), Progress: st.Progress})
			case tagLeft, tagRight:
				l, n := binary.Uvarint(c[off:])
				if n <= 0 || uint64(len(c)-off-n) < l {
					return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte %d: %w value", ci, off, errTruncated)
				}
				off += n
				v := c[off : off+int(l) : off+int(l)]
				off += int(l)
				st.Entries = append(st.Entries, match.Entry[[]byte]{Side: match.Side(side), Time: t, Matched: tag&flagMatched != 0, Value: v})
			case tagBucket:
				b := Bucket{ID: t}
				for s := range b.Count {
					k, n := binary.Uvarint(c[off:])
					if n <= 0 {
						return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte %d: %w bucket", ci, off, errTruncated)
					}
					off += n
					b.Count[s] = int(k)
				}
				for s := range b.Count {
					if b.Count[s] > 0 {
						t, n := binary.Varint(c[off:])
						if n <= 0 {
							return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte %d: %w bucket", ci, off, errTruncated)
						}
						off += n
						b.Oldest[s] = t
					}
				}
				if at == nil {
					at = map[int64]int{}
				}
				if i, ok := at[b.ID]; ok {
					st.Buckets[i] = b
				} else {
					at[b.ID] = len(st.Buckets)
					st.Buckets = append(st.Buckets, b)
				}
			default:
				return State{}, fmt.Errorf("beamjoin: bagstate: state chunk %d at byte %d: unknown tag %#x", ci, off-1-n, tag)
			}
		}
	}
	return st, nil
}
