package prismrun

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// captured returns the job failure captured in testdata/name.
func captured(t *testing.T, name string) error {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return errors.New(string(b))
}

// progressRace is the error of a real job that failed with the race,
// captured with a 150 ms stall injected into a copy of Prism between the
// start of the ticker and the wait (see the package documentation).
func progressRace(t *testing.T) error { t.Helper(); return captured(t, "progress-race.txt") }

// stuck is a job failure in which Prism declared the job stuck
// (engine.ElementManager.checkForQuiescence's error and its stage dump),
// captured from Prism's "job failed" log line in a run of the README's
// replay example with --log-level debug.
func stuck(t *testing.T) error { t.Helper(); return captured(t, "stuck.txt") }

func TestKnownBug(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		race, stop bool
		want       string
	}{
		{"the race", progressRace(t), true, false, "a progress request to a step it runs itself"},
		{"stuck", stuck(t), false, true, "it declared the job stuck with elements still pending"},
		{"no error", nil, false, false, ""},
		{"an assertion failure", errors.New("actual PCollection does not match expected values"), false, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsProgressRace(tc.err); got != tc.race {
				t.Errorf("IsProgressRace = %v, want %v", got, tc.race)
			}
			if got := IsStuck(tc.err); got != tc.stop {
				t.Errorf("IsStuck = %v, want %v", got, tc.stop)
			}
			if got := KnownBug(tc.err); got != tc.want {
				t.Errorf("KnownBug = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIsProgressRace(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"the race, as Prism reports it", progressRace(t), true},
		{"no error", nil, false},
		{"an assertion failure", errors.New("job job-001 failed:\nactual PCollection does not match expected values"), false},
		{"another panic in the stage", errors.New("panic in stage.Execute bundle processing goroutine: unexpected number of runner transforms"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsProgressRace(tc.err); got != tc.want {
				t.Errorf("IsProgressRace = %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeJob fails with the given errors in turn, then succeeds.
type fakeJob struct {
	errs []error
	runs int
}

func (f *fakeJob) execute(context.Context) (beam.PipelineResult, error) {
	f.runs++
	if f.runs <= len(f.errs) {
		return nil, f.errs[f.runs-1]
	}
	return nil, nil
}

// laterAttempts are the attempts after the first: 2 to Attempts.
func laterAttempts() []int {
	var a []int
	for i := 2; i <= Attempts; i++ {
		a = append(a, i)
	}
	return a
}

func TestRunRetriesOnlyTheRace(t *testing.T) {
	race, stop, assertion := progressRace(t), stuck(t), errors.New("actual PCollection does not match expected values")
	tests := []struct {
		name    string
		errs    []error
		runs    int
		retries []int
		wantErr string // "" for success
	}{
		{"success at once", nil, 1, nil, ""},
		{"the race once, then success", []error{race}, 2, []int{2}, ""},
		{"the race twice, then success", []error{race, race}, 3, []int{2, 3}, ""},
		{"the race every time", slices.Repeat([]error{race}, Attempts+1), Attempts, laterAttempts(), "rerunning is safe"},
		{"stuck once, then success", []error{stop}, 2, []int{2}, ""},
		{"the race, then stuck, then success", []error{race, stop}, 3, []int{2, 3}, ""},
		{"stuck every time", slices.Repeat([]error{stop}, Attempts), Attempts, laterAttempts(), "declared the job stuck"},
		{"an assertion failure is not retried", []error{assertion}, 1, nil, "does not match"},
		{"an assertion failure after the race", []error{race, assertion}, 2, []int{2}, "does not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := &fakeJob{errs: tc.errs}
			var retries []int
			_, err := run(context.Background(), job.execute, func(attempt int, err error) {
				if KnownBug(err) == "" {
					t.Errorf("retrying after %v", err)
				}
				retries = append(retries, attempt)
			})
			if job.runs != tc.runs {
				t.Errorf("ran %d times, want %d", job.runs, tc.runs)
			}
			if len(retries) != len(tc.retries) {
				t.Errorf("retried before attempts %v, want %v", retries, tc.retries)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	job := &fakeJob{errs: []error{progressRace(t), progressRace(t)}}
	if _, err := run(ctx, job.execute, nil); !IsProgressRace(err) || job.runs != 1 {
		t.Errorf("cancelled: ran %d times, err %v; want 1 run and the race", job.runs, err)
	}
}

// TestOnRetry checks that the hooks run before each retry, after the
// attempt that failed and before the next one starts, and not once removed.
func TestOnRetry(t *testing.T) {
	var events []string
	job := &fakeJob{errs: []error{progressRace(t), progressRace(t)}}
	execute := func(ctx context.Context) (beam.PipelineResult, error) {
		events = append(events, "run")
		return job.execute(ctx)
	}
	remove := OnRetry(func() { events = append(events, "hook") })
	if _, err := run(context.Background(), execute, nil); err != nil {
		t.Fatal(err)
	}
	remove()
	job = &fakeJob{errs: []error{progressRace(t)}}
	if _, err := run(context.Background(), execute, nil); err != nil {
		t.Fatal(err)
	}
	want := "run hook run hook run run run"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// TestRunRecoversAnUnsendableFailure checks that when Prism could not send
// a failure to its client (gRPC's refusal of a string that is not UTF-8),
// Run takes the failure Prism logged during the attempt: a stuck job is
// run again, anything else is returned with the refusal noted, and the
// refusal alone (no failure logged during the attempt) is returned as it
// is.
func TestRunRecoversAnUnsendableFailure(t *testing.T) {
	refusal := errors.New("rpc error: code = Internal desc = " + unsendable)
	stuckWithRawKeys := errors.New(stuck(t).Error() + "\nbyKey map[\xff\xfe:1]")
	tests := []struct {
		name    string
		logs    []error // what Prism logs as "job failed" in each attempt
		runs    int
		wantErr string
	}{
		{"stuck, with keys that are not UTF-8, then success", []error{stuckWithRawKeys}, 2, ""},
		{"stuck every time", slices.Repeat([]error{stuckWithRawKeys}, Attempts), Attempts, "declared the job stuck"},
		{"another failure is returned at once", []error{errors.New("panic in DoFn: \xff")}, 1, "panic in DoFn"},
		{"nothing logged: the refusal as it is", []error{nil}, 1, unsendable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs := 0
			execute := func(context.Context) (beam.PipelineResult, error) {
				runs++
				if runs > len(tc.logs) {
					return nil, nil
				}
				if e := tc.logs[runs-1]; e != nil {
					slog.Error("job failed", slog.String("job", "job-001"), slog.Any("error", e))
				}
				return nil, refusal
			}
			_, err := run(context.Background(), execute, nil)
			if runs != tc.runs {
				t.Errorf("ran %d times, want %d", runs, tc.runs)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %.300v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
