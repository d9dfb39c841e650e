package multiway

// This file holds the multi-way join's timer policy: a key's one cleanup
// timer fires when its earliest element expires (CleanupEvery less a
// millisecond later, to clean up several at once) and holds the output
// watermark at its oldest anchor element while EmitFinal or EmitRetract
// may still emit rows for it; a key holding only its progress is forgotten
// at forgetAt. As in the interval join, a timer is tagged with its hold
// and firing time, so that a firing can be checked against the key's
// state, and a change of hold clears the old tag (Prism v2.77 miscounts
// holds otherwise). One timer family: two hang on Prism.

import (
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// noHold marks a timer that holds no output watermark.
const noHold = int64(-1 << 63)

// timer is where a key's cleanup timer must be.
type timer struct {
	fire, hold int64
	set        bool
}

// tag is "" for a timer that holds nothing, else "hold/fire".
func (t timer) tag() string {
	if t.hold == noHold {
		return ""
	}
	return strconv.FormatInt(t.hold, 10) + "/" + strconv.FormatInt(t.fire, 10)
}

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
		t := timer{fire: next + max(c.CleanupEvery, 1) - 1, hold: noHold, set: true}
		if c.Rules.Emit != match.Immediate && len(b.By[Anchor]) > 0 {
			t.hold = min(b.By[Anchor][0].Time, t.fire)
		}
		return t
	}
	if b.Progress != match.NoProgress {
		return timer{fire: c.forgetAt(b.Progress), hold: noHold, set: true}
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

// moveTimer moves the key's timer from before to after.
func (f *Fn) moveTimer(tp timers.Provider, before, after timer) {
	if before == after {
		return
	}
	if before.set && (!after.set || before.tag() != after.tag()) {
		f.Cleanup.ClearTag(tp, before.tag())
	}
	if after.set {
		hold := after.hold
		if hold == noHold {
			hold = after.fire
		}
		f.Cleanup.Set(tp, time.UnixMilli(after.fire), timers.WithOutputTimestamp(time.UnixMilli(hold)), timers.WithTag(after.tag()))
	}
}

// firedAt reads which time a firing is for from its tag, or for a timer
// that holds nothing, its output timestamp; ok is false for a tag this
// join did not write.
func firedAt(tc timers.Context, et beam.EventTime) (at int64, ok bool) {
	if tc.Tag == "" {
		return et.Milliseconds(), true
	}
	if _, s, found := strings.Cut(tc.Tag, "/"); found {
		t, err := strconv.ParseInt(s, 10, 64)
		return t, err == nil
	}
	return 0, false
}
