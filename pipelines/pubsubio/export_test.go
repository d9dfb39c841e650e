package pubsubio

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// SetLeaseTimings sets how long a lease waits before it first extends its
// messages' deadlines, the deadline it asks for, and how often it asks
// again, so that a test can run them against a fake on a faster clock. It
// returns a function that restores them.
func SetLeaseTimings(first, deadline, every time.Duration) (restore func()) {
	f, d, e := firstExtension, leaseDeadline, extendEvery
	firstExtension, leaseDeadline, extendEvery = first, deadline, every
	return func() { firstExtension, leaseDeadline, extendEvery = f, d, e }
}

// ReadRunner runs the bundles of Read's DoFn on one subscription as a
// runner does, one ProcessElement call and its checkpoint each, so that a
// test chooses which bundles commit and which fail and are run again.
type ReadRunner struct{ fn *readFn }

// Cursor is a restriction of Read's DoFn and its watermark estimator's
// state: where a bundle starts.
type Cursor struct {
	c  cursor
	wm clock
}

// NewReadRunner sets up Read's DoFn on subscription with the options of
// Read, as a worker does.
func NewReadRunner(subscription string, opts ...Option) (*ReadRunner, error) {
	project, id, err := parseSubscription(subscription)
	if err != nil {
		return nil, err
	}
	c, err := newConfig("Read", opts)
	if err != nil {
		return nil, err
	}
	if c.name == "" {
		c.name = id
	}
	fn := newReadFn(subscription, project, c)
	if err := fn.Setup(); err != nil {
		return nil, err
	}
	return &ReadRunner{fn: fn}, nil
}

// Watermark is the watermark a bundle reported at the checkpoint that
// made cur, in epoch milliseconds.
func (c Cursor) Watermark() int64 { return c.wm.Watermark }

// Initial is the read's initial restriction.
func (r *ReadRunner) Initial() Cursor {
	c := r.fn.CreateInitialRestriction(nil)
	return Cursor{c, r.fn.InitialWatermarkEstimatorState(0, c, nil)}
}

// Split splits the initial cursor into the read's readers, as a runner
// does before their first bundles.
func (r *ReadRunner) Split(initial Cursor) []Cursor {
	var out []Cursor
	for _, c := range r.fn.SplitRestriction(nil, initial.c) {
		out = append(out, Cursor{c, r.fn.InitialWatermarkEstimatorState(0, c, nil)})
	}
	return out
}

// Bundle runs one bundle from cur: it returns the messages the bundle
// emitted, as "EVENT_TIME DATA" lines, their message IDs, and the residual
// its checkpoint made. The runner commits a bundle by running the residual
// next, and retries a failed one by running cur again.
func (r *ReadRunner) Bundle(ctx context.Context, cur Cursor) (lines, ids []string, residual Cursor, err error) {
	rt := r.fn.CreateTracker(cur.c)
	we := r.fn.CreateWatermarkEstimator(cur.wm)
	emit := func(et beam.EventTime, m Message) {
		lines = append(lines, fmt.Sprintf("%d %s", et.Milliseconds(), m.Data))
		ids = append(ids, m.ID)
	}
	dead := func(_ beam.EventTime, d DeadLetter) { err = fmt.Errorf("dead letter %s: %s", d.MessageID, d.Error) }
	pc, perr := r.fn.ProcessElement(ctx, we, rt, nil, emit, dead)
	if perr != nil {
		return nil, nil, Cursor{}, perr
	}
	if !pc.ShouldResume() {
		return lines, ids, Cursor{}, err
	}
	_, res, serr := rt.TrySplit(0)
	if serr != nil {
		return nil, nil, Cursor{}, serr
	}
	return lines, ids, Cursor{res.(cursor), r.fn.WatermarkEstimatorState(we)}, err
}

// BundleWithDead is Bundle returning the dead letters too, as "ID:
// ERROR" lines, rather than failing on one.
func (r *ReadRunner) BundleWithDead(ctx context.Context, cur Cursor) (lines, dead []string, residual Cursor, err error) {
	rt := r.fn.CreateTracker(cur.c)
	we := r.fn.CreateWatermarkEstimator(cur.wm)
	emit := func(et beam.EventTime, m Message) {
		lines = append(lines, fmt.Sprintf("%d %s", et.Milliseconds(), m.Data))
	}
	deadFn := func(_ beam.EventTime, d DeadLetter) { dead = append(dead, d.Data+": "+d.Error) }
	pc, err := r.fn.ProcessElement(ctx, we, rt, nil, emit, deadFn)
	if err != nil || !pc.ShouldResume() {
		return lines, dead, Cursor{}, err
	}
	_, res, err := rt.TrySplit(0)
	if err != nil {
		return nil, nil, Cursor{}, err
	}
	return lines, dead, Cursor{res.(cursor), r.fn.WatermarkEstimatorState(we)}, nil
}

// SetPulledHook makes every reader tell hook the message IDs it pulls, by
// reader number, for the pipelines started after it. It returns a
// function that removes it, to call once they have stopped.
func SetPulledHook(hook func(reader int, ids []string)) (remove func()) {
	pulledHook = hook
	return func() { pulledHook = nil }
}

// processes are the worker processes InProcess has switched between, by
// name: what each keeps in memory between bundles.
var processes = map[string]*processMemory{}

// processMemory is what a worker process keeps between bundles: its ID,
// its unsettled leases and its read groups.
type processMemory struct {
	id     string
	leases map[string]*lease
	groups map[string]*readGroup
}

// current is the name of the process bundles run in now; "" is the test
// binary's own, before InProcess is called.
var current = ""

// InProcess makes the bundles run from now on run in the worker process
// called name, with its own process ID, leases and read groups, as on
// another worker. A name not used before is a process that has just
// started: a worker that restarted, or one that a restore from a
// checkpoint started. The bundles of a test run one at a time, so the
// switch is safe.
func InProcess(name string) {
	if name == current {
		return
	}
	leases.Lock()
	readGroups.Lock()
	defer leases.Unlock()
	defer readGroups.Unlock()
	processes[current] = &processMemory{id: processID, leases: leases.m, groups: readGroups.m}
	p, ok := processes[name]
	if !ok {
		p = &processMemory{id: fmt.Sprintf("%s-%d", name, len(processes)), leases: map[string]*lease{}, groups: map[string]*readGroup{}}
	}
	processID, leases.m, readGroups.m = p.id, p.leases, p.groups
	current = name
}

// BundleSplit runs one bundle from cur and, once split is closed, splits
// it at fraction 0 from another goroutine, as a runner does to bound a
// bundle's time (Dataflow), taking the residual's watermark estimator
// state at that moment as the SDK does; then it calls afterSplit, and
// waits for the bundle to end. It returns what the bundle emitted and the
// residual of the split (none if the bundle had ended before it).
func (r *ReadRunner) BundleSplit(ctx context.Context, cur Cursor, split <-chan struct{}, afterSplit func()) (lines, ids []string, residual Cursor, err error) {
	rt := r.fn.CreateTracker(cur.c)
	we := r.fn.CreateWatermarkEstimator(cur.wm)
	emit := func(et beam.EventTime, m Message) {
		lines = append(lines, fmt.Sprintf("%d %s", et.Milliseconds(), m.Data))
		ids = append(ids, m.ID)
	}
	dead := func(_ beam.EventTime, d DeadLetter) { err = fmt.Errorf("dead letter %s: %s", d.MessageID, d.Error) }
	done := make(chan error, 1)
	go func() {
		_, perr := r.fn.ProcessElement(ctx, we, rt, nil, emit, dead)
		done <- perr
	}()
	var res any
	var state clock
	select {
	case <-split:
		state = r.fn.WatermarkEstimatorState(we)
		_, res, err = rt.TrySplit(0)
		afterSplit()
	case perr := <-done:
		done <- perr
	}
	if perr := <-done; perr != nil {
		return nil, nil, Cursor{}, perr
	}
	if err != nil || res == nil {
		return lines, ids, Cursor{}, err
	}
	return lines, ids, Cursor{res.(cursor), state}, nil
}

// BundleWatched is Bundle while another goroutine reads the bundle's
// watermark and its watermark estimator state over and over, as the SDK
// does to answer the runner's progress and split requests.
func (r *ReadRunner) BundleWatched(ctx context.Context, cur Cursor) (lines, ids []string, residual Cursor, err error) {
	rt := r.fn.CreateTracker(cur.c)
	we := r.fn.CreateWatermarkEstimator(cur.wm)
	emit := func(et beam.EventTime, m Message) {
		lines = append(lines, fmt.Sprintf("%d %s", et.Milliseconds(), m.Data))
		ids = append(ids, m.ID)
	}
	dead := func(_ beam.EventTime, d DeadLetter) { err = fmt.Errorf("dead letter %s: %s", d.MessageID, d.Error) }
	stop := make(chan struct{})
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = we.CurrentWatermark()
			_ = r.fn.WatermarkEstimatorState(we)
			time.Sleep(time.Millisecond)
		}
	}()
	pc, perr := r.fn.ProcessElement(ctx, we, rt, nil, emit, dead)
	close(stop)
	<-watching
	if perr != nil {
		return nil, nil, Cursor{}, perr
	}
	if !pc.ShouldResume() {
		return lines, ids, Cursor{}, err
	}
	_, res, serr := rt.TrySplit(0)
	if serr != nil {
		return nil, nil, Cursor{}, serr
	}
	return lines, ids, Cursor{res.(cursor), r.fn.WatermarkEstimatorState(we)}, err
}
