package join_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// Event is an impression, click or conversion of a user.
type Event struct {
	User string
	What string
	At   time.Time
}

func init() {
	join.RegisterMultiTypes[string, Event]()
	register.Function1x3(userEvent)
	register.Function2x0(describeFunnel)
}

func userEvent(e Event) (beam.EventTime, string, Event) {
	return beam.EventTime(e.At.UnixMilli()), e.User, e
}

func describeFunnel(r join.MultiResult[string, Event], emit func(string)) {
	parts := []string{r.Key}
	for _, v := range r.Values {
		if v == nil {
			parts = append(parts, "-")
		} else {
			parts = append(parts, v.What)
		}
	}
	emit(strings.Join(parts, " "))
}

// Join impressions with the clicks that follow them within 10 minutes
// (required) and the conversions within a day (optional), in one step:
// the SQL impressions JOIN clicks LEFT JOIN conversions, each condition
// on the user and the impression's time.
func ExampleMulti() {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	events := func(es ...any) beam.PCollection {
		return beam.ParDo(s, userEvent, beam.Create(s, es...))
	}
	impressions := events(Event{"ann", "ad", t0}, Event{"bob", "ad", t0})
	clicks := events(Event{"ann", "click", t0.Add(2 * time.Minute)}, Event{"bob", "click", t0.Add(3 * time.Minute)})
	conversions := events(Event{"ann", "purchase", t0.Add(5 * time.Hour)})

	rows := join.Multi[string, Event](s, impressions, []join.MultiInput{
		join.Required(clicks, join.Between(0, 10*time.Minute)),
		join.Optional(conversions, join.Between(0, 24*time.Hour)),
	}, join.EmitFinal).Records

	got := gather(s, beam.ParDo(s, describeFunnel, rows))
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	for _, line := range got() {
		fmt.Println(line)
	}
	// Output:
	// ann ad click purchase
	// bob ad click -
}
