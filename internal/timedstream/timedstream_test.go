package timedstream_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/internal/timedstream"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismrun.Runner) }

func TestCreate(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	sc := timedstream.Script{}.Add(timedstream.Element{Time: 1, Value: "a"}).Advance(5).Add(timedstream.Element{Time: 7, Value: "b"})
	passert.Equals(s, timedstream.Create(s, sc), "a", "b")
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
