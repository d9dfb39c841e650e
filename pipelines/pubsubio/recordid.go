// This file holds RecordIDs, the IDs a publisher gives records so that
// Read, with IDAttribute, drops a record published twice.

package pubsubio

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// RecordIDs gives each record of a stream an ID made from its content: the
// first 128 bits of the SHA-256 of its bytes, in hex, and the number of
// records with the same bytes before it in the stream ("…:0" for the
// first). Publishing the same stream again gives every record the same ID
// again, so a Read with IDAttribute drops the second copy within its
// de-duplication window; two equal records within one stream keep distinct
// IDs, so neither is dropped. `beamjoin publish` sets these IDs in the
// attribute DefaultIDAttribute. A RecordIDs holds one counter per distinct
// record content it has seen (about 40 bytes each). The zero value is not
// ready; use NewRecordIDs. It is not safe for concurrent use.
type RecordIDs struct {
	seen map[[16]byte]int
}

// NewRecordIDs returns a RecordIDs that has seen no record.
func NewRecordIDs() *RecordIDs { return &RecordIDs{seen: map[[16]byte]int{}} }

// Next returns the ID of the next record of the stream, whose bytes are
// data.
func (r *RecordIDs) Next(data []byte) string {
	sum := sha256.Sum256(data)
	var h [16]byte
	copy(h[:], sum[:16])
	n := r.seen[h]
	r.seen[h] = n + 1
	return hex.EncodeToString(h[:]) + ":" + strconv.Itoa(n)
}
