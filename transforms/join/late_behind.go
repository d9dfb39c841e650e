package join

// This file holds LateBehind: the interval join's lateness rule in terms of
// the watermark, for a source that knows its own watermark and can judge
// lateness before the join, on keys the join has never seen.

import (
	"fmt"
	"time"
)

// LateBehind returns how far behind the watermark an element of side s
// may be and still be joined by an Interval built with opts: an element
// more than that behind the watermark may have lost a partner to cleanup,
// and the join, once its key's cleanup has reached the watermark, judges
// it late. It is the allowed lateness plus, when the bounds keep every
// partner of side s later than it (a lower bound above 0 for the left
// side, an upper bound below 0 for the right), that distance; so an
// element behind the watermark by no more than the allowed lateness is
// never judged late by it.
//
// The join itself cannot read the watermark and judges an element against
// its key's cleanup (see docs/design/interval.md, "Lateness: what the join
// can and cannot know"), so an element far behind the watermark on a key it never saw
// is joined as new. A source that knows its watermark (a replay, a stream
// reader with a watermark estimate) can send an element more than
// LateBehind behind it to a late output of its own instead; the package
// documentation says what that gives and what it costs. Package jsonl's
// replay does so for the beamjoin command.
//
// LateBehind returns TryInterval's error for options it would reject, and
// an error for a side that is neither Left nor Right.
func LateBehind(s Side, opts ...Option) (time.Duration, error) {
	if s != Left && s != Right {
		return 0, fmt.Errorf("beamjoin: join.LateBehind: unknown side %d", s)
	}
	c, err := intervalConfig(opts)
	if err != nil {
		return 0, err
	}
	r := c.rules()
	// Rules.IsLate: an element of side s at ts is late against progress p
	// iff Expiry(other side, from) <= p, from being its earliest partner's
	// time. Both are ts plus a constant, so with p the watermark it is late
	// iff it is at least that constant behind it: more than the constant
	// less a millisecond.
	from, _ := r.PartnerRange(s.core(), 0)
	return time.Duration(r.Expiry(s.core().Other(), from)-1) * time.Millisecond, nil
}
