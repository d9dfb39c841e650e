package join

// This file holds the interval join's memory of forgotten keys: when a
// key's state is cleared (its data gone and its progress kept for one join
// memory), the worker process keeps the key's last progress, so that an
// element that arrives for the key later still, behind that progress, is
// judged late rather than joined as new. State stays bounded; the memory
// costs worker RAM, bounded by KeyMemory, and is lost with the process.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
)

// DefaultKeyMemory is how many forgotten keys each worker process
// remembers per join unless KeyMemory says otherwise: at about 100 bytes a
// key (its encoding, its progress and the map's own cost), some 10 MB.
const DefaultKeyMemory = 100_000

// maxJoinMemories is how many joins' memories a process keeps: a process
// that runs many pipelines one after the other (tests, a retried job)
// drops the oldest run's memory first.
const maxJoinMemories = 64

// recall is a process's memory of forgotten keys, one per run of a join
// (by the join's ID): every DoFn instance of the join in the process
// shares it, since a key can be processed by any of them.
var recall = struct {
	sync.Mutex
	joins map[joinID]*keyMemory
	order []joinID // joins in the order their memories were made
}{joins: map[joinID]*keyMemory{}}

// keyMemory holds the progress of up to capacity forgotten keys, the
// oldest forgotten first out.
type keyMemory struct {
	progress map[string]remembered
	ring     []ringSlot // forgetting order; len = capacity once full
	next     int        // the slot the next forgotten key takes, once full
	seq      uint64
}

type remembered struct {
	progress int64
	seq      uint64 // which forgetting this is, so a stale ring slot does not delete it
}

type ringSlot struct {
	key string
	seq uint64
}

// joinID names one run of a join transform: its DoFn instances share it
// through serialization. It is drawn afresh each time the pipeline is
// serialized for a run (MarshalJSON), so that a pipeline run again in the
// same process (a job retried after a runner failure, as internal/prismrun
// does; a test that runs one pipeline twice) starts with an empty memory of
// forgotten keys, as a new job on new workers would, rather than judging
// its elements against the earlier run's progress.
type joinID string

// MarshalJSON draws a new ID: the one the run's workers decode.
func (joinID) MarshalJSON() ([]byte, error) { return json.Marshal(string(newJoinID())) }

// newJoinID is a random join ID.
func newJoinID() joinID {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return joinID(hex.EncodeToString(b[:]))
}

// remember records a key's progress when its state is cleared.
func (j *joiner) remember(key []byte, progress int64) {
	if j.KeyMemory <= 0 {
		return
	}
	recall.Lock()
	defer recall.Unlock()
	m := recall.joins[j.ID]
	if m == nil {
		if len(recall.order) == maxJoinMemories {
			delete(recall.joins, recall.order[0])
			recall.order = recall.order[1:]
		}
		m = &keyMemory{progress: map[string]remembered{}}
		recall.joins[j.ID] = m
		recall.order = append(recall.order, j.ID)
	}
	m.seq++
	k := string(key)
	m.progress[k] = remembered{progress: progress, seq: m.seq}
	slot := ringSlot{key: k, seq: m.seq}
	if len(m.ring) < j.KeyMemory {
		m.ring = append(m.ring, slot)
		return
	}
	old := m.ring[m.next]
	if r, ok := m.progress[old.key]; ok && r.seq == old.seq {
		delete(m.progress, old.key)
	}
	m.ring[m.next] = slot
	m.next = (m.next + 1) % len(m.ring)
}

// recalled returns the progress a key had when this process last cleared
// its state, if it still remembers it. The progress stays remembered: a
// bundle that recalls it may fail and be retried.
func (j *joiner) recalled(key []byte) (int64, bool) {
	if j.KeyMemory <= 0 {
		return 0, false
	}
	recall.Lock()
	defer recall.Unlock()
	m := recall.joins[j.ID]
	if m == nil {
		return 0, false
	}
	r, ok := m.progress[string(key)]
	return r.progress, ok
}
