package multiway

// This file holds the multi-way join's timer policy: a key's one cleanup
// timer fires when its earliest element expires (CleanupEvery less a
// millisecond later, to clean up several at once) and holds the output
// watermark at its oldest anchor element while EmitFinal or EmitRetract
// may still emit rows for it; a key holding only its progress is forgotten
// at forgetAt. As in the interval join, a timer is tagged with its hold
// and firing time, so that a firing can be checked against the key's
// state, and a change of hold clears the old tag (Prism v2.77 miscounts
// holds otherwise): package timertag. One timer family: two hang on Prism.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

// timer is where a key's cleanup timer must be.
type timer = timertag.Timer

// timerFor derives the timer from the key's buffer alone, so that a
// firing can recompute which time it is for.
func (c Config) timerFor(b *Buffer) timer {
	next, ok := int64(0), false
	for i, es := range b.By {
		if len(es) > 0 {
			if t := c.Rules.Expiry(i, es[0].Time); !ok || t < next {
				next, ok = t, true
			}
		}
	}
	if ok {
		t := timer{Fire: next + max(c.CleanupEvery, 1) - 1, Hold: timertag.NoHold, Set: true}
		if c.Rules.Emit != match.Immediate && len(b.By[Anchor]) > 0 {
			t.Hold = min(b.By[Anchor][0].Time, t.Fire)
		}
		return t
	}
	if b.Progress != match.NoProgress {
		return timer{Fire: c.forgetAt(b.Progress), Hold: timertag.NoHold, Set: true}
	}
	return timer{}
}

// forgetAt is when a key that holds only its progress p forgets it: the
// progress horizon after p, rounded up to CleanupEvery. It depends on the
// state alone, so every worker forgets a key at the same event time.
func (c Config) forgetAt(p int64) int64 {
	if c.Horizon == 0 {
		return p
	}
	t := p + c.Horizon
	if e := c.CleanupEvery; e > 1 {
		if r := t % e; r > 0 {
			t += e - r
		} else if r < 0 {
			t -= r
		}
	}
	return t
}

// moveTimer moves the key's timer from before, still set if set, to after.
func (f *Fn) moveTimer(tp timers.Provider, before, after timer) {
	timertag.Move(&f.Cleanup, tp, before, after, before.Set)
}
