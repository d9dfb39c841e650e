package flinkrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/extworker"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/runnerlib"
)

// Environment says where a job's SDK workers run.
type Environment int

const (
	// Loopback runs the workers in this process (Beam's LOOPBACK).
	Loopback Environment = iota
	// Process has the job server start each worker as a process of its
	// own (Beam's PROCESS environment): the Go SDK's boot loader fetches
	// the staged worker binary and starts it with --worker=true, as a
	// worker starts on a Flink cluster. Options.Boot names the loader.
	Process
)

func (e Environment) String() string {
	if e == Process {
		return "process"
	}
	return "loopback"
}

// Options are a job's submission options.
type Options struct {
	// Endpoint is the job service, host:port.
	Endpoint string
	// Environment is where the SDK workers run.
	Environment Environment
	// Parallelism is the job's parallelism; 0 means 2.
	Parallelism int
	// Boot is the Go SDK's boot loader (see BuildBoot); Process only.
	Boot string
	// WorkerBinary is the binary a Process worker runs: "" means this
	// process's own executable, which must call beam.Init() first thing
	// in main or TestMain (a test binary does, through ptest.Main).
	WorkerBinary string
	// WorkerDir is the workers' semi-persistent directory; Process only.
	// StopWorkers(WorkerDir) ends the workers that the boot loader left.
	WorkerDir string
	// Name is the job's name; "" means "beamjoin".
	Name string
	// Flink holds further pipeline options for the job server's Flink
	// runner, by their snake_case names (checkpointing_interval,
	// max_bundle_time_mills, shutdown_sources_after_idle_ms, ...). The Go
	// SDK's own submission sends none of them (it nests its flags under
	// go_options, which the Java side does not read); Execute sends these
	// at top level, as the Java and Python SDKs do.
	Flink map[string]any
	// OnSubmit, if set, is called with the job's ID once it is submitted.
	OnSubmit func(jobID string)
}

// Execute runs p on the job server at o.Endpoint and waits for the job to
// end, returning its result (with its metrics) or the job's error.
func Execute(ctx context.Context, p *beam.Pipeline, o Options) (beam.PipelineResult, error) {
	if !beam.Initialized() {
		return nil, fmt.Errorf("flinkrun: call beam.Init() before building pipelines (ptest.Main does)")
	}
	edges, _, err := p.Build()
	if err != nil {
		return nil, err
	}
	par := o.Parallelism
	if par == 0 {
		par = 2
	}
	urn := "beam:env:external:v1"
	config := func(context.Context) string { return "" }
	bin := o.WorkerBinary
	switch o.Environment {
	case Loopback:
		srv, err := extworker.StartLoopback(ctx, 0)
		if err != nil {
			return nil, err
		}
		defer srv.Stop(ctx)
		config = srv.EnvironmentConfig
	case Process:
		if o.Boot == "" || o.WorkerDir == "" {
			return nil, fmt.Errorf("flinkrun: a PROCESS environment needs Options.Boot and Options.WorkerDir")
		}
		shim, err := bootShim(o.Boot, o.WorkerDir)
		if err != nil {
			return nil, err
		}
		cmd, _ := json.Marshal(map[string]string{"command": shim})
		urn = "beam:env:process:v1"
		config = func(context.Context) string { return string(cmd) }
		if bin == "" {
			if bin, err = os.Executable(); err != nil {
				return nil, err
			}
		}
	}
	env, err := graphx.CreateEnvironment(ctx, urn, config)
	if err != nil {
		return nil, err
	}
	pipeline, err := graphx.Marshal(edges, &graphx.Options{Environment: env})
	if err != nil {
		return nil, err
	}
	if o.Environment == Loopback {
		// The binary is not run; the SDK stages an empty file in its place.
		f, err := os.CreateTemp("", "beamjoin-loopback-*")
		if err != nil {
			return nil, err
		}
		f.Close()
		defer os.Remove(f.Name())
		bin = f.Name()
	}
	if err := runnerlib.UpdateGoEnvironmentWorker(bin, pipeline); err != nil {
		return nil, err
	}
	return submit(ctx, pipeline, bin, par, o)
}

// BuildBoot builds the Go SDK's boot loader (the program a Beam Go
// container starts) from the module cache into dir and returns its path.
func BuildBoot(dir string) (string, error) {
	boot := filepath.Join(dir, "boot")
	out, err := exec.Command("go", "build", "-o", boot, "github.com/apache/beam/sdks/v2/go/container").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("flinkrun: building the Go SDK's boot loader: %v\n%s", err, out)
	}
	return boot, nil
}

// bootShim writes a script that starts the boot loader with the worker's
// directory; the job server adds --id and --provision_endpoint. The boot
// loader fetches the worker binary into a temporary directory and leaves
// it there: TMPDIR puts it under dir, which the caller removes.
func bootShim(boot, dir string) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return "", err
	}
	shim := filepath.Join(dir, "boot.sh")
	script := "#!/bin/sh\nTMPDIR=" + strconv.Quote(filepath.Join(dir, "tmp")) + "\nexport TMPDIR\nexec " + strconv.Quote(boot) + " --semi_persist_dir=" + strconv.Quote(dir) + " \"$@\"\n"
	return shim, os.WriteFile(shim, []byte(script), 0o755)
}

// Workers returns the process IDs of the running SDK workers that the boot
// loader started with dir as their semi-persistent directory.
func Workers(dir string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if !slices.Contains(args, "--semi_persist_dir="+dir) || !slices.Contains(args, "--worker=true") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// StopWorkers kills the SDK workers of Workers(dir): when the job server
// ends a boot loader, the worker it started is left running.
func StopWorkers(dir string) {
	for _, pid := range Workers(dir) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
