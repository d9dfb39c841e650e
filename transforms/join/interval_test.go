package join_test

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func TestIntervalSmoke(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(
		l(10_000, "a", "l1"),
		r(12_000, "a", "r1"),
		l(20_000, "b", "l2"),
	))
	res, late := join.Interval[string, string, string](s, left, right, join.Between(-5*time.Second, 5*time.Second), join.LeftOuter)
	passert.Equals(s, beam.ParDo(s, formatResult, res),
		"unmatched a l1@10000 - t=10000",
		"pair a l1@10000 r1@12000 t=12000",
		"unmatched b l2@20000 - t=20000")
	passert.Empty(s, late)
	pr := ptest.RunAndValidate(t, p)
	t.Log(counters(t, pr))
}
