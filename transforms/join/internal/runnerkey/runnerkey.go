// Package runnerkey holds the runner keys beamjoin's engines make of a
// join's key when one runner key per join key is not what they want: a
// time bucket of a join key (the interval join's split layout), and a
// bucket of a shard of join keys (the bounded paths). A runner key is
// bytes, compared by the runner as bytes, so the same key must be made
// the same way on every worker: a join key's encoding is deterministic
// (join checks it), and the hash of a shard is FNV-1a.
//
// It rests on the standard library alone.
package runnerkey

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// Bucket is the runner key of time bucket b of rest, a join key's
// encoding or a shard (Shard): the bucket in 8 bytes, then rest.
func Bucket(b int64, rest []byte) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(rest)), uint64(b)), rest...)
}

// Split is Bucket's inverse.
func Split(g []byte) (b int64, rest []byte, err error) {
	if len(g) < 8 {
		return 0, nil, fmt.Errorf("beamjoin: join.Interval: group key of %d bytes, want at least 8", len(g))
	}
	return int64(binary.BigEndian.Uint64(g)), g[8:], nil
}

// Shard is the shard of a join key's encoding, out of n, as a runner key:
// 4 bytes, the same on every worker (FNV-1a), as keys' encodings are
// deterministic.
func Shard(key []byte, n int) []byte {
	h := fnv.New32a()
	h.Write(key)
	return binary.BigEndian.AppendUint32(nil, h.Sum32()%uint32(max(n, 1)))
}

// FloorDiv is a/b rounded towards minus infinity, for b > 0: the bucket
// of width b that holds time a.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
