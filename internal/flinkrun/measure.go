package flinkrun

// This file holds what make bench-flink measures of a run on Flink: the
// job's run time as Flink logs it, and the peak memory and CPU time of a
// process.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TimestampOptions are JVM options that make Flink's and Beam's log lines
// (through slf4j-simple) start with their time to the millisecond, which
// JobRunTime reads.
var TimestampOptions = []string{
	"-Dorg.slf4j.simpleLogger.showDateTime=true",
	"-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
}

// jobState is Flink's log line of a job's change of state
// (ExecutionGraph), with the time TimestampOptions puts first.
var jobState = regexp.MustCompile(`^(\S+) .*ExecutionGraph - Job .* \(([0-9a-f]{32})\) switched from state (\w+) to (\w+)\.`)

// JobRunTime returns how long the last job that log shows finished took
// to run: from its switch to RUNNING to its switch from RUNNING to
// FINISHED, as Flink's ExecutionGraph logs them. This is the time of the
// job itself, without the JVM's start, the pipeline's translation or the
// cluster's start, and the same measure whichever program submitted the
// job. The log's lines must carry their time (TimestampOptions).
func JobRunTime(log string) (time.Duration, error) {
	running := map[string]time.Time{}
	var last time.Duration
	found := false
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		m := jobState.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05.000Z07:00", m[1])
		if err != nil {
			return 0, fmt.Errorf("flinkrun: job %s: a log line without its time (start the JVM with TimestampOptions): %q", m[2], sc.Text())
		}
		switch {
		case m[4] == "RUNNING":
			running[m[2]] = at
		case m[3] == "RUNNING" && m[4] == "FINISHED":
			start, ok := running[m[2]]
			if !ok {
				return 0, fmt.Errorf("flinkrun: job %s finished but its start is not in the log", m[2])
			}
			last, found = at.Sub(start), true
		}
	}
	if !found {
		return 0, fmt.Errorf("flinkrun: no job finished in the log")
	}
	return last, nil
}

// PeakRSS returns the peak resident memory of process pid since it
// started or since ResetPeakRSS (Linux's VmHWM).
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("flinkrun: no VmHWM in /proc/%d/status", pid)
}

// ResetPeakRSS sets the peak that PeakRSS reports to the process's
// resident memory now (Linux 4.0 and later).
func ResetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// CPUTime returns the user and system CPU time process pid has used.
func CPUTime(pid int) (time.Duration, error) {
	return statCPU(fmt.Sprintf("/proc/%d/stat", pid))
}

// statCPU reads the user and system time of a /proc stat file.
func statCPU(file string) (time.Duration, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14 and stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("flinkrun: short %s", file)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// ThreadCPU returns the CPU time that the live threads of process pid
// have used, by thread name with its digits left out ("C2 CompilerThre",
// "grpc-default-executor-"), so that a JVM's time splits into its
// compiler, its collector, gRPC's threads and Flink's tasks.
func ThreadCPU(pid int) (map[string]time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
		if err != nil {
			continue // the thread has ended
		}
		cpu, err := statCPU(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if err != nil {
			continue
		}
		name := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return -1
			}
			return r
		}, strings.TrimSpace(string(comm)))
		out[name] += cpu
	}
	return out, nil
}

// Usage is what a run cost a job server's JVM and this process, where
// LOOPBACK workers run.
type Usage struct {
	JVMPeakRSS, GoPeakRSS int64 // bytes
	JVMCPU, GoCPU         time.Duration
}

// MeasureUsage starts measuring the usage of the JVM pid and of this
// process, and returns the function that ends it. This process's peak is
// measured from its resident memory at the start, once Go has given back
// what it can; the JVM's from its resident memory at the start.
func MeasureUsage(pid int) (stop func() Usage) {
	runtime.GC()
	debug.FreeOSMemory()
	self := os.Getpid()
	ResetPeakRSS(self)
	ResetPeakRSS(pid)
	jvm0, _ := CPUTime(pid)
	go0 := selfCPU()
	return func() Usage {
		var u Usage
		u.GoPeakRSS, _ = PeakRSS(self)
		u.JVMPeakRSS, _ = PeakRSS(pid)
		jvm1, _ := CPUTime(pid)
		u.JVMCPU, u.GoCPU = jvm1-jvm0, selfCPU()-go0
		return u
	}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
