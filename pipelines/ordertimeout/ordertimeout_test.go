package ordertimeout_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/ordertimeout"
	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismrun.Runner) }

func init() {
	register.Function3x0(splitStep)
	register.Emitter1[ordertimeout.Order]()
	register.Emitter1[ordertimeout.Payment]()
	register.Function2x1(describeAlert)
	register.DoFn1x0[string](&sinkFn{})
}

// step is one element of a test's TestStream: an order or a payment. Prism
// takes one TestStream per pipeline, so both inputs come from one stream of
// steps, split by splitStep.
type step struct {
	Order   *ordertimeout.Order
	Payment *ordertimeout.Payment
}

func splitStep(s step, orders func(ordertimeout.Order), payments func(ordertimeout.Payment)) {
	if s.Order != nil {
		orders(*s.Order)
	} else {
		payments(*s.Payment)
	}
}

// t0 is the tests' 09:00.
var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// script builds a TestStream: its calls add an order or a payment at a
// minute after t0, or advance the watermark to one.
type script struct{ c teststream.Config }

func newScript() *script {
	return &script{c: teststream.NewConfig()}
}

func at(minute float64) int64 {
	return t0.Add(time.Duration(minute * float64(time.Minute))).UnixMilli()
}

func (s *script) order(minute float64, id string) {
	must(s.c.AddElements(at(minute), step{Order: &ordertimeout.Order{ID: id, Customer: "c-" + id, Amount: 100}}))
}

func (s *script) payment(minute float64, id string) {
	must(s.c.AddElements(at(minute), step{Payment: &ordertimeout.Payment{OrderID: id, Amount: 100}}))
}

func (s *script) watermark(minute float64) { must(s.c.AdvanceWatermark(at(minute))) }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// describeAlert writes an alert as "id placed hh:mm:ss deadline hh:mm:ss
// timestamp hh:mm:ss", the last being the element timestamp.
func describeAlert(et beam.EventTime, a ordertimeout.Alert) string {
	return fmt.Sprintf("%s placed %s deadline %s timestamp %s", a.Order.ID,
		a.Placed.Format(time.TimeOnly), a.Deadline.Format(time.TimeOnly), et.ToTime().UTC().Format(time.TimeOnly))
}

// lines holds what each sinkFn received; Prism runs the pipeline in this
// process.
var lines = struct {
	sync.Mutex
	got map[string][]string
}{got: map[string][]string{}}

var sinkCount atomic.Int64

// A pipeline that prismrun runs again starts from nothing: drop what the
// failed attempt's sinks received.
func init() {
	prismrun.OnRetry(func() {
		lines.Lock()
		defer lines.Unlock()
		clear(lines.got)
	})
}

type sinkFn struct{ Name string }

func (f *sinkFn) ProcessElement(line string) {
	lines.Lock()
	defer lines.Unlock()
	lines.got[f.Name] = append(lines.got[f.Name], line)
}

// gather adds a sink for a PCollection<string> and returns a function that,
// once the pipeline has run, returns the lines it received, sorted.
func gather(s beam.Scope, col beam.PCollection) func() []string {
	name := fmt.Sprintf("sink%d", sinkCount.Add(1))
	beam.ParDo0(s, &sinkFn{Name: name}, col)
	return func() []string {
		lines.Lock()
		defer lines.Unlock()
		got := slices.Clone(lines.got[name])
		slices.Sort(got)
		return got
	}
}

// TestAlerts plays orders and payments that hit each case of the rule and
// of late payments, with a 15 minute timeout. A watermark advance between
// two steps makes Prism process them in that order even when the first is
// the later in event time, which is how a payment comes before its order.
func TestAlerts(t *testing.T) {
	s := newScript()
	s.watermark(0)
	s.order(0, "o1")  // paid at 09:05: no alert
	s.order(1, "o2")  // never paid
	s.order(2, "o3")  // paid exactly at its deadline, which is too late
	s.order(3, "o4")  // paid long after its deadline, once its alert is out
	s.order(5, "o6")  // paid in time, but the payment arrives behind the watermark, after the alert
	s.order(8, "o8")  // paid long after its deadline
	s.order(10, "o9") // paid by a payment stamped before it, which does not count
	s.payment(6, "o5")
	s.payment(0, "o7")
	s.payment(19, "o10")
	s.watermark(0.5)
	s.order(4, "o5")  // its payment came first: no alert
	s.order(1, "o7")  // its payment came first but is stamped before it: it does not count
	s.order(4, "o10") // its payment came first but exactly at its deadline: it does not count
	s.watermark(1)
	s.payment(5, "o1")
	s.payment(40, "o8")
	s.payment(9, "o9")
	s.order(2, "o2")  // a second order o2 while the first is pending: ignored, and counted
	s.watermark(16.5) // the deadline of o2 and o7 (09:16) passes
	s.payment(17, "o3")
	s.watermark(21) // the deadlines of o3, o4, o10 and o6 pass
	s.payment(30, "o4")
	s.payment(10, "o6") // behind the watermark
	s.order(2, "o11")   // behind the watermark and past its deadline
	s.watermark(22)
	must(s.c.AdvanceWatermarkToInfinity())

	p, root := beam.NewPipelineWithRoot()
	orders, payments := beam.ParDo2(root, splitStep, teststream.Create(root, s.c))
	alerts := ordertimeout.Alerts(root, orders, payments, 15*time.Minute)
	got := gather(root, beam.ParDo(root, describeAlert, alerts))

	want := []string{
		"o10 placed 09:04:00 deadline 09:19:00 timestamp 09:19:00",
		"o11 placed 09:02:00 deadline 09:17:00 timestamp 09:17:00",
		"o2 placed 09:01:00 deadline 09:16:00 timestamp 09:16:00",
		"o3 placed 09:02:00 deadline 09:17:00 timestamp 09:17:00",
		"o4 placed 09:03:00 deadline 09:18:00 timestamp 09:18:00",
		"o6 placed 09:05:00 deadline 09:20:00 timestamp 09:20:00",
		"o7 placed 09:01:00 deadline 09:16:00 timestamp 09:16:00",
		"o8 placed 09:08:00 deadline 09:23:00 timestamp 09:23:00",
		"o9 placed 09:10:00 deadline 09:25:00 timestamp 09:25:00",
	}
	pr, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got()); diff != "" {
		t.Errorf("alerts differ (-want +got):\n%s", diff)
	}
	duplicates := pr.Metrics().Query(func(r metrics.SingleResult) bool {
		return r.Namespace() == "ordertimeout" && r.Name() == "duplicate_orders"
	}).Counters()
	if len(duplicates) != 1 || duplicates[0].Result() != 1 {
		t.Errorf("counter ordertimeout/duplicate_orders is %v, want 1", duplicates)
	}
}

func TestAlertsRejectsATimeoutThatIsNotPositive(t *testing.T) {
	const want = "beamjoin: ordertimeout.Alerts: timeout 0s must be a positive whole number of milliseconds"
	defer func() {
		if r := recover(); r != want {
			t.Errorf("panicked with %v, want %q", r, want)
		}
	}()
	_, s := beam.NewPipelineWithRoot()
	orders := beam.Create(s, ordertimeout.Order{ID: "o1"})
	payments := beam.Create(s, ordertimeout.Payment{OrderID: "o1"})
	ordertimeout.Alerts(s, orders, payments, 0)
}
