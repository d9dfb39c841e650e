// This file holds the progress of a run as this process sees it: a hub of
// atomic counts that the accounting DoFns feed when they run here, in the
// same process as Run (Prism in process, or any runner with LOOPBACK
// workers). On a worker elsewhere a DoFn finds no hub and counts nothing
// for it; the runner's own UI shows the progress there.

package jsonjoin

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress is what a running join has done so far, as counted in this
// process.
type Progress struct {
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Sides are the names of the inputs, as a Summary's Sides: nil for
	// left and right, input1 to inputN for a multi-way join.
	Sides []string
	// Lines are the lines read per side, in the order of the sides; Time
	// the latest event time read per side (zero before the first record).
	Lines []int64
	Time  []time.Time
	// Out is the result records made so far (they are written at the end).
	Out int64
	// Done is set on the last report, made when the job has finished.
	Done bool
}

// String is the progress as the beamjoin command prints it:
//
//	beamjoin: 25s: left 120345 lines read (event time 2024-05-01T10:22:00Z), right 98002 lines read (…); 45120 records out
//
// A multi-way join's inputs are input1, input2, ….
func (p Progress) String() string { return p.format("") }

// Stopped is the progress of a stream that was stopped, as the beamjoin
// command prints it:
//
//	beamjoin: stopped after 25s: left 120345 lines read (event time …), right 98002 lines read (…); 45120 records out
func (p Progress) Stopped() string { return p.format("stopped after ") }

func (p Progress) format(what string) string {
	var b strings.Builder
	round := time.Second
	if p.Elapsed < 10*time.Second {
		round = 100 * time.Millisecond
	}
	fmt.Fprintf(&b, "beamjoin: %s%v:", what, p.Elapsed.Round(round))
	sides := p.Sides
	if sides == nil {
		sides = leftRight
	}
	for i, side := range sides {
		if i > 0 {
			b.WriteString(",")
		}
		var lines int64
		if i < len(p.Lines) {
			lines = p.Lines[i]
		}
		fmt.Fprintf(&b, " %s %d lines read", side, lines)
		if i < len(p.Time) && !p.Time[i].IsZero() {
			fmt.Fprintf(&b, " (event time %s)", p.Time[i].UTC().Format(time.RFC3339))
		}
	}
	fmt.Fprintf(&b, "; %d records out", p.Out)
	return b.String()
}

// noTime is the event time of a line that is not a record.
const noTime = math.MinInt64

// hub is the progress of one run, fed by its DoFns. A nil hub counts
// nothing.
type hub struct {
	sides   []string // as Progress.Sides
	index   map[string]int
	lines   []atomic.Int64
	maxTime []atomic.Int64
	records atomic.Int64
}

// newHub is the hub of a run whose inputs are named sides.
func newHub(sides []string) *hub {
	h := &hub{index: map[string]int{}, lines: make([]atomic.Int64, len(sides)), maxTime: make([]atomic.Int64, len(sides))}
	if !slices.Equal(sides, leftRight) {
		h.sides = sides
	}
	for i, side := range sides {
		h.index[side] = i
	}
	h.reset()
	return h
}

func (h *hub) reset() {
	for i := range h.lines {
		h.lines[i].Store(0)
		h.maxTime[i].Store(noTime)
	}
	h.records.Store(0)
}

// line counts a line read on side, a record at time ms or a dead letter
// (noTime).
func (h *hub) line(side string, ms int64) {
	if h == nil {
		return
	}
	i := h.index[side]
	h.lines[i].Add(1)
	for {
		cur := h.maxTime[i].Load()
		if ms <= cur || h.maxTime[i].CompareAndSwap(cur, ms) {
			return
		}
	}
}

// out counts a result record made.
func (h *hub) out() {
	if h != nil {
		h.records.Add(1)
	}
}

func (h *hub) progress(elapsed time.Duration) Progress {
	p := Progress{Elapsed: elapsed, Sides: h.sides, Out: h.records.Load(),
		Lines: make([]int64, len(h.lines)), Time: make([]time.Time, len(h.lines))}
	for i := range h.lines {
		p.Lines[i] = h.lines[i].Load()
		if ms := h.maxTime[i].Load(); ms != noTime {
			p.Time[i] = time.UnixMilli(ms)
		}
	}
	return p
}

// hubs are the progress hubs of this process's runs, by id.
var hubs sync.Map

// registerHub makes a hub for a run whose inputs are named sides and
// returns its id; unregister it with hubs.Delete.
func registerHub(sides []string) (string, *hub) {
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	h := newHub(sides)
	hubs.Store(id, h)
	return id, h
}

// lookupHub returns the hub of id in this process, or nil: a DoFn on a
// worker in another process has none.
func lookupHub(id string) *hub {
	if id == "" {
		return nil
	}
	if h, ok := hubs.Load(id); ok {
		return h.(*hub)
	}
	return nil
}

// watch calls report with h's progress every interval until stop is
// closed, then once more with Done set; it returns when that call has.
func watch(h *hub, interval time.Duration, report func(Progress), stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				report(h.progress(time.Since(start)))
			case <-stop:
				p := h.progress(time.Since(start))
				p.Done = true
				report(p)
				return
			}
		}
	}()
	return done
}
