// Package ordertimeout raises an alert for every order that is not paid in
// time. It is the example of join.Connect that SPEC §4 asks for: a
// pipeline author's own stateful DoFn on the connected stream of orders and
// payments, with Beam state and one event-time timer family, doing what a
// Flink user would write as a KeyedCoProcessFunction.
//
//	alerts := ordertimeout.Alerts(s, orders, payments, 15*time.Minute)
//
// # The rule
//
// orders is a PCollection<Order> and payments a PCollection<Payment>, each
// element timestamped with its event time. An order placed at time p is
// paid in time iff a payment for its ID has an event time t with
// p <= t < p + timeout; its deadline is p + timeout. Every order not paid in
// time gives one Alert, timestamped with the deadline, when the watermark
// passes the deadline. Only event times decide; the order in which orders and
// payments arrive does not, as long as they are not behind the watermark.
// This is the unmatched side of a left outer interval join,
//
//	join.Interval[string, Order, Payment](s, keyedOrders, keyedPayments,
//		join.Between(0, timeout), join.UpperExclusive(), join.LeftOuter, join.EmitFinal)
//
// written by hand to show the pattern; a real pipeline with exactly this
// rule could use join.Interval.
//
// # Late payments
//
//   - A payment at or after its order's deadline does not count, whenever
//     it arrives: the alert is emitted anyway, and the payment produces
//     nothing. If it arrives before the watermark passes the deadline, it is
//     ignored at once; if after, the alert is already out and cannot be
//     withdrawn.
//   - A payment timestamped before its order was placed does not count
//     either.
//   - A payment that arrives behind the watermark (later than the watermark
//     says anything with its timestamp can) is judged by its timestamp like
//     any other while its order is still pending. But an order whose deadline
//     the watermark has passed has already been alerted, and its state is
//     gone: a payment arriving after that, even one timestamped in time,
//     cannot withdraw the alert.
//
// An order that arrives behind the watermark is judged by the same rule: if
// its deadline has passed too, its timer fires at the next watermark advance
// and its alert is emitted then. The alert still carries the deadline as its
// timestamp, so it is behind the watermark downstream, as its order was.
//
// An order ID is expected once. A second order with the same ID while the
// first is pending is ignored, and counted in the Beam counter
// ordertimeout/duplicate_orders.
//
// # State and timers
//
// One DoFn, keyed by order ID, with two state cells and one event-time timer
// family (a second family hangs on Prism), told apart by tag:
//
//   - Pending (a Value) holds an order not yet paid; the timer tagged
//     "deadline" fires at its deadline and emits the alert. A payment in
//     time clears both.
//   - Payments (a Bag of event times) holds the payments that arrived before
//     their order, as can happen when the two come from different sources.
//     They are kept until the watermark passes the latest of them, when no
//     order that they could pay can still arrive on time; the timer tagged
//     "forget" then drops them.
//
// So a key's state is gone once the watermark has passed its deadline and
// its payments. The inputs are expected in the global window (unwindowed).
package ordertimeout

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterTypes[string, Order, Payment]()
	register.Function1x2(keyOrder)
	register.Function1x2(keyPayment)
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, string, join.Tagged[Order, Payment], func(beam.EventTime, Alert), error](&timeoutFn{})
	register.Emitter2[beam.EventTime, Alert]()
}

// Order is an order placed at its element timestamp.
type Order struct {
	ID       string
	Customer string
	Amount   int64 // cents
}

// Payment pays for the order OrderID at its element timestamp.
type Payment struct {
	OrderID string
	Amount  int64 // cents
}

// Alert reports an order that was not paid in time. Its element timestamp is
// Deadline.
type Alert struct {
	Order    Order
	Placed   time.Time
	Deadline time.Time
}

// Alerts returns a PCollection<Alert> with one Alert for every order in
// orders (a PCollection<Order>) that no payment in payments (a
// PCollection<Payment>) pays within timeout of its placement. See the
// package documentation for the exact rule and for late payments. Alerts
// panics if timeout is not a positive whole number of milliseconds.
func Alerts(s beam.Scope, orders, payments beam.PCollection, timeout time.Duration) beam.PCollection {
	if timeout <= 0 || timeout%time.Millisecond != 0 {
		panic(fmt.Sprintf("beamjoin: ordertimeout.Alerts: timeout %v must be a positive whole number of milliseconds", timeout))
	}
	s = s.Scope("ordertimeout.Alerts")
	events := join.Connect[string, Order, Payment](s,
		beam.ParDo(s, keyOrder, orders),
		beam.ParDo(s, keyPayment, payments))
	return beam.ParDo(s, &timeoutFn{
		Timeout:  timeout.Milliseconds(),
		Pending:  state.MakeValueState[pendingOrder]("pending"),
		Payments: state.MakeBagState[int64]("payments"),
		Timer:    timers.InEventTime("timer"),
	}, events)
}

func keyOrder(o Order) (string, Order)       { return o.ID, o }
func keyPayment(p Payment) (string, Payment) { return p.OrderID, p }

// pendingOrder is an order waiting for its payment.
type pendingOrder struct {
	Order  Order
	Placed int64 // event time, milliseconds
}

// The tags of timeoutFn's one timer family.
const (
	deadlineTag = "deadline"
	forgetTag   = "forget"
)

var duplicateOrders = beam.NewCounter("ordertimeout", "duplicate_orders")

// timeoutFn is the stateful DoFn on the connected orders and payments of
// one order ID.
type timeoutFn struct {
	Timeout int64 // milliseconds

	Pending  state.Value[pendingOrder]
	Payments state.Bag[int64] // event times of payments that came before their order
	Timer    timers.EventTime
}

// paidInTime is the rule: a payment at paid pays an order placed at placed.
func (f *timeoutFn) paidInTime(placed, paid int64) bool {
	return placed <= paid && paid < placed+f.Timeout
}

func (f *timeoutFn) ProcessElement(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, id string, ev join.Tagged[Order, Payment], emit func(beam.EventTime, Alert)) error {
	pending, isPending, err := f.Pending.Read(sp)
	if err != nil {
		return err
	}
	now := et.Milliseconds()
	if ev.Side == join.Left {
		if isPending {
			duplicateOrders.Inc(ctx, 1)
			return nil
		}
		early, _, err := f.Payments.Read(sp)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(early, func(paid int64) bool { return f.paidInTime(now, paid) }) {
			return nil
		}
		// The timer's output timestamp defaults to its firing time, the
		// deadline, which holds the watermark for the alert.
		f.Timer.Set(tp, time.UnixMilli(now+f.Timeout), timers.WithTag(deadlineTag))
		return f.Pending.Write(sp, pendingOrder{Order: *ev.Left, Placed: now})
	}

	if isPending {
		if f.paidInTime(pending.Placed, now) {
			f.Timer.ClearTag(tp, deadlineTag)
			return f.Pending.Clear(sp)
		}
		return nil // it pays no order: too late, or before the order
	}
	// The order may still come. An order this payment can pay is placed at
	// or before it, so once the watermark passes it, no such order can
	// arrive on time. Setting the timer again replaces it; the firing keeps
	// payments that are not yet due to be forgotten.
	f.Timer.Set(tp, time.UnixMilli(now+1), timers.WithTag(forgetTag))
	return f.Payments.Add(sp, now)
}

func (f *timeoutFn) OnTimer(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, id string, tm timers.Context, emit func(beam.EventTime, Alert)) error {
	switch tm.Tag {
	case deadlineTag:
		pending, isPending, err := f.Pending.Read(sp)
		if err != nil || !isPending {
			return err // paid in time; the cleared timer fired anyway
		}
		deadline := pending.Placed + f.Timeout
		emit(beam.EventTime(deadline), Alert{
			Order:    pending.Order,
			Placed:   time.UnixMilli(pending.Placed).UTC(),
			Deadline: time.UnixMilli(deadline).UTC(),
		})
		return f.Pending.Clear(sp)

	case forgetTag:
		// et is the timer's output timestamp, its firing time: payments
		// before it can pay no order that is still on time.
		early, _, err := f.Payments.Read(sp)
		if err != nil {
			return err
		}
		keep := slices.DeleteFunc(early, func(paid int64) bool { return paid < et.Milliseconds() })
		if err := f.Payments.Clear(sp); err != nil || len(keep) == 0 {
			return err
		}
		for _, paid := range keep {
			if err := f.Payments.Add(sp, paid); err != nil {
				return err
			}
		}
		f.Timer.Set(tp, time.UnixMilli(slices.Max(keep)+1), timers.WithTag(forgetTag))
	}
	return nil
}
