package flinkrun_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/google/go-cmp/cmp"
)

// TestFlinkJobServer starts a job server, runs a pipeline on it in each
// environment, and checks that Stop leaves no JVM behind.
func TestFlinkJobServer(t *testing.T) {
	cp := flinkrun.Classpath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	js, err := flinkrun.Start(ctx, flinkrun.Config{Classpath: cp})
	if err != nil {
		t.Fatal(err)
	}
	dir := js.Dir
	pid := js.Pid()

	boot, err := flinkrun.BuildBoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	workers := t.TempDir()
	for _, env := range []flinkrun.Environment{flinkrun.Loopback, flinkrun.Process} {
		t.Run(env.String(), func(t *testing.T) {
			out := t.TempDir()
			p, s := beam.NewPipelineWithRoot()
			kv := beam.ParDo(s, pairWithOne, beam.Create(s, "a", "b", "a", "c", "a"))
			flinkrun.WriteLines(s, out, beam.ParDo(s, formatCount, stats.SumPerKey(s, kv)))
			if _, err := flinkrun.Execute(ctx, p, flinkrun.Options{Endpoint: js.Endpoint, Environment: env, Boot: boot, WorkerDir: workers}); err != nil {
				t.Fatalf("job: %v\njob server's log:\n%s", err, js.Log())
			}
			got, err := flinkrun.ReadLines(out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"a 3", "b 1", "c 1"}, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
	flinkrun.StopWorkers(workers)
	if err := js.RemoveArtifacts(); err != nil {
		t.Error(err)
	}

	js.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the job server's JVM (pid %d) is still running after Stop", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stop left the job server's directory %s: %v", dir, err)
	}
}
