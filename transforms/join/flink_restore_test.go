package join_test

// This file holds the restore test: a streaming interval join on Flink
// with checkpointing on, whose SDK worker process is killed after a
// checkpoint has completed. Flink restores the job from that checkpoint;
// the join's records must still be exactly the oracle's.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/timedstream"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.DoFn1x1[join.Result[string, string, string], string](&pairLineFn{})
	register.DoFn3x0[beam.EventTime, string, func(string)](&inMemoryJoinFn{})
	register.Function1x2(keyTick)
	register.DoFn4x0[state.Provider, string, []byte, func(beam.EventTime, string)](&stepFn{})
	register.Emitter2[beam.EventTime, string]()
}

func keyTick(b []byte) (string, []byte) { return "", b }

// stepFn plays a script on Flink's own ticks (flinkrun.Ticks): one step
// per tick, the index of the next step kept in Beam state, so that after
// a restore it goes on from the checkpoint's step whatever the source
// replays. The source emits no watermark until it ends: every element is
// on time, and the join's timers fire at the end.
type stepFn struct {
	Script timedstream.Script
	Next   state.Value[int64]
}

func (f *stepFn) ProcessElement(sp state.Provider, _ string, _ []byte, emit func(beam.EventTime, string)) {
	i, _, err := f.Next.Read(sp)
	if err != nil {
		panic(err)
	}
	if i >= int64(len(f.Script)) {
		return
	}
	for _, e := range f.Script[i].Elements {
		emit(beam.EventTime(e.Time), e.Value)
	}
	if err := f.Next.Write(sp, i+1); err != nil {
		panic(err)
	}
}

// restoreWorkload is a stream of elements on eight keys, one element per
// step with the watermark a second behind it, and the pairs of an
// interval join Between(0, 3s) of it.
func restoreWorkload(n int) (timedstream.Script, []string) {
	type el struct {
		side     string
		key, val string
		ts       int64
	}
	var els []el
	var sc timedstream.Script
	for i := range n {
		side := "0"
		if i%3 != 0 {
			side = "1"
		}
		e := el{side: side, key: fmt.Sprintf("k%d", i%8), val: fmt.Sprintf("v%d", i), ts: 1_000_000 + int64(i)*100}
		els = append(els, e)
		sc = append(sc, timedstream.Step{Elements: []timedstream.Element{{Time: e.ts, Value: e.side + " " + e.key + " " + e.val}}, Watermark: e.ts - 1000})
	}
	var pairs []string
	for _, l := range els {
		for _, r := range els {
			if l.side == "0" && r.side == "1" && l.key == r.key && r.ts-l.ts >= 0 && r.ts-l.ts <= 3000 {
				pairs = append(pairs, l.key+" "+l.val+" "+r.val)
			}
		}
	}
	slices.Sort(pairs)
	return sc, pairs
}

// pairLineFn writes a pair as "key left right".
type pairLineFn struct{}

func (pairLineFn) ProcessElement(r join.Result[string, string, string]) string {
	return r.Key + " " + *r.Left + " " + *r.Right
}

// inMemoryJoinFn is the planted defect: the same join, its buffer kept in
// the worker process's memory instead of Beam state, so that a restore
// from a checkpoint, which brings back Beam state only, loses it.
type inMemoryJoinFn struct{}

var inMemoryBuffer = struct {
	sync.Mutex
	byKey map[string][]string // "side val ts"
}{byKey: map[string][]string{}}

func (inMemoryJoinFn) ProcessElement(et beam.EventTime, line string, emit func(string)) {
	f := strings.Fields(line) // side key val
	ts := int64(et)
	inMemoryBuffer.Lock()
	defer inMemoryBuffer.Unlock()
	for _, b := range inMemoryBuffer.byKey[f[1]] {
		var side, val string
		var bts int64
		fmt.Sscanf(b, "%s %s %d", &side, &val, &bts)
		if side == f[0] {
			continue
		}
		lv, lt, rv, rt := val, bts, f[2], ts
		if f[0] == "0" {
			lv, lt, rv, rt = f[2], ts, val, bts
		}
		if rt-lt >= 0 && rt-lt <= 3000 {
			emit(f[1] + " " + lv + " " + rv)
		}
	}
	inMemoryBuffer.byKey[f[1]] = append(inMemoryBuffer.byKey[f[1]], fmt.Sprintf("%s %s %d", f[0], f[2], ts))
}

// completedCheckpoint is Flink's log line for a completed checkpoint.
var completedCheckpoint = regexp.MustCompile(`Completed checkpoint \d+ for job`)

// restored is Flink's log line for a job restored from a checkpoint.
var restored = regexp.MustCompile(`Restoring job \S+ from Checkpoint \d+`)

// runRestore runs the workload through join (the interval join, or the
// planted in-memory join) on a job server with checkpointing on, kills the
// SDK worker process once a checkpoint has completed and some records are
// out, and returns the records written (with duplicates) and how many
// worker processes it killed.
func runRestore(t *testing.T, inMemory bool) (got []string, killed int) {
	t.Helper()
	cp := flinkrun.Classpath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	js, err := flinkrun.Start(ctx, flinkrun.Config{Classpath: cp, FlinkConf: map[string]string{
		"restart-strategy.type":                 "fixed-delay",
		"restart-strategy.fixed-delay.attempts": "3",
		"restart-strategy.fixed-delay.delay":    "1 s",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Stop()
	dir := t.TempDir()
	boot, err := flinkrun.BuildBoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	workers := dir + "/workers"
	defer flinkrun.StopWorkers(workers)

	sc, want := restoreWorkload(400)
	out := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	ticks := beam.ParDo(s, keyTick, flinkrun.Ticks(s, len(sc), 25*time.Millisecond))
	lines := beam.ParDo(s, &stepFn{Script: sc, Next: state.MakeValueState[int64]("next")}, ticks)
	if inMemory {
		flinkrun.WriteLines(s, out, beam.ParDo(s, &inMemoryJoinFn{}, lines))
	} else {
		left, right := beam.ParDo2(s, &splitLineFn{}, lines)
		j := join.Interval[string, string, string](s, left, right, join.Between(0, 3*time.Second))
		flinkrun.WriteLines(s, out, beam.ParDo(s, &pairLineFn{}, j.Records))
	}

	done := make(chan error, 1)
	go func() {
		_, err := flinkrun.Execute(ctx, p, flinkrun.Options{
			Endpoint: js.Endpoint, Environment: flinkrun.Process, Boot: boot, WorkerDir: workers,
			Flink: map[string]any{"checkpointing_interval": 300},
		})
		done <- err
	}()
	// A third of the pairs out, then the next checkpoint: the join's state
	// then holds elements whose partners are still to come.
	for {
		if lines, _ := flinkrun.ReadLines(out); len(lines) >= len(want)/3 {
			t.Logf("%d records out; waiting for a checkpoint to complete", len(lines))
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended before a third of the records were out: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := js.WaitForLine(ctx, completedCheckpoint); err != nil {
		t.Fatalf("no checkpoint completed: %v\nthe job server's log:\n%s", err, js.Log())
	}
	for _, pid := range flinkrun.Workers(workers) {
		syscall.Kill(pid, syscall.SIGKILL)
		killed++
	}
	if err := <-done; err != nil {
		t.Fatalf("job: %v\nthe job server's log:\n%s", err, js.Log())
	}
	if !restored.MatchString(js.Log()) {
		t.Fatalf("Flink did not restore the job from a checkpoint; the job server's log:\n%s", js.Log())
	}
	got, err = flinkrun.ReadLines(out)
	if err != nil {
		t.Fatal(err)
	}
	return got, killed
}

// TestFlinkRestore kills the worker process of a streaming interval join
// on Flink after a checkpoint: Flink restores the join's state from the
// checkpoint and replays the source from its position there, so every
// pair comes out, some twice (the sink writes a bundle's records when
// the bundle ends, and the bundles after the checkpoint run again).
func TestFlinkRestore(t *testing.T) {
	_, want := restoreWorkload(400)
	got, killed := runRestore(t, false)
	if killed == 0 {
		t.Fatal("no worker process was killed")
	}
	dups := len(got) - len(slices.Compact(slices.Clone(got)))
	if diff := cmp.Diff(want, slices.Compact(got)); diff != "" {
		t.Errorf("pairs after the restore differ from the oracle's (-want +got):\n%s", diff)
	}
	t.Logf("%d pairs, %d written twice or more (at-least-once sink), %d worker processes killed", len(want), dups, killed)
}

// TestFlinkRestoreCanFail runs the restore test's schedule with the
// planted defect, a join that keeps its buffer in process memory: the
// restore must lose pairs, or the restore test proves nothing.
func TestFlinkRestoreCanFail(t *testing.T) {
	_, want := restoreWorkload(400)
	got, _ := runRestore(t, true)
	missing := 0
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	for _, w := range want {
		if !have[w] {
			missing++
		}
	}
	if missing == 0 {
		t.Fatalf("the in-memory join lost no pair across the restore (%d pairs): the restore test cannot tell state kept from state lost", len(want))
	}
	t.Logf("the in-memory join lost %d of %d pairs across the restore", missing, len(want))
}
