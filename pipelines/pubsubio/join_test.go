// This file holds the helpers of the tests that read Pub/Sub into an
// interval join: what a delivery guarantee means is what the join's output
// shows.

package pubsubio_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterTypes[string, pubsubio.Message, pubsubio.Message]()
	register.DoFn3x1[pubsubio.Message, func(string, pubsubio.Message), func(string, pubsubio.Message), error](&sideFn{})
	register.Function1x3(keyBySide)
	register.DoFn1x0[join.Result[string, pubsubio.Message, pubsubio.Message]](&collectPairFn{})
	register.DoFn1x0[join.LateElement[string, pubsubio.Message, pubsubio.Message]](&collectLateFn{})
	register.Emitter2[string, pubsubio.Message]()
}

// event is a test message: an order or a payment of key K, named ID, and
// the side it belongs to when both sides share one subscription.
type event struct {
	Side string `json:"side,omitempty"` // "order" or "payment"
	K    string `json:"k"`
	ID   string `json:"id"`
}

func (e event) json() string {
	b, _ := json.Marshal(e) // strings always encode
	return string(b)
}

func parseEvent(m pubsubio.Message) (event, error) {
	var e event
	if err := json.Unmarshal(m.Data, &e); err != nil {
		return e, fmt.Errorf("test: message %s: %w", m.Data, err)
	}
	return e, nil
}

// keyBySide keys a message by its key field; the error fails the bundle.
func keyBySide(m pubsubio.Message) (string, pubsubio.Message, error) {
	e, err := parseEvent(m)
	return e.K, m, err
}

// sideFn splits the events of one subscription into orders and payments,
// keyed by their key field.
type sideFn struct{}

func (sideFn) ProcessElement(m pubsubio.Message, order, payment func(string, pubsubio.Message)) error {
	e, err := parseEvent(m)
	if err != nil {
		return err
	}
	if e.Side == "order" {
		order(e.K, m)
	} else {
		payment(e.K, m)
	}
	return nil
}

// pairLine and lateLine are how the join's records are reported.
func pairLine(k, order, payment string) string { return "pair " + k + " " + order + " " + payment }
func lateLine(k, id string) string             { return "late " + k + " " + id }

// collectPairFn reports each pair as pairLine under Key.
type collectPairFn struct{ Key string }

func (f *collectPairFn) ProcessElement(r join.Result[string, pubsubio.Message, pubsubio.Message]) {
	var o, p event
	_ = json.Unmarshal(r.Left.Data, &o)
	_ = json.Unmarshal(r.Right.Data, &p)
	registry.add(f.Key, pairLine(r.Key, o.ID, p.ID))
}

// collectLateFn reports each late element as lateLine under Key.
type collectLateFn struct{ Key string }

func (f *collectLateFn) ProcessElement(l join.LateElement[string, pubsubio.Message, pubsubio.Message]) {
	m := l.Left
	if m == nil {
		m = l.Right
	}
	var e event
	_ = json.Unmarshal(m.Data, &e)
	registry.add(f.Key, lateLine(l.Key, e.ID))
}

// joinWindow is the join's bound: a payment joins the orders of its key
// from 10 s before it up to its own time.
const joinWindow = 10 * time.Second

// joinOrdersPayments joins keyed orders and payments with an inner
// interval join, a payment up to joinWindow after its order, and reports
// its pairs and late elements under key.
func joinOrdersPayments(s beam.Scope, key string, orders, payments beam.PCollection) {
	out := join.Interval[string, pubsubio.Message, pubsubio.Message](s, orders, payments, join.Between(0, joinWindow))
	beam.ParDo0(s, &collectPairFn{Key: key}, out.Records)
	beam.ParDo0(s, &collectLateFn{Key: key}, out.Late)
}
