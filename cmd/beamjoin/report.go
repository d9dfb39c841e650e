// This file holds what the command says while and after a job runs that is
// not the summary: progress, and what a dry run translated.

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
)

// progressPrinter returns the reporter of a run's progress: a line on w
// once every, then less and less often (every tenth of the time elapsed
// once that is longer), so that an hours-long run writes tens of lines,
// not thousands. The last report, when the job is done, is not printed:
// the summary follows.
func progressPrinter(w io.Writer, every time.Duration) func(jsonjoin.Progress) {
	next := every
	return func(p jsonjoin.Progress) {
		if p.Done || p.Elapsed < next {
			return
		}
		fmt.Fprintln(w, p)
		next = p.Elapsed + max(every, p.Elapsed/10)
	}
}

// remoteAccounting is where workers that share no files with the command
// write the run's accounting: Beam's --temp_location, which Dataflow
// requires; "" (the summary is then the runner's counters) when it is not
// set.
func remoteAccounting() string {
	f := flag.Lookup("temp_location")
	if f == nil || f.Value.String() == "" {
		return ""
	}
	return strings.TrimSuffix(f.Value.String(), "/") + fmt.Sprintf("/beamjoin-accounting-%d.jsonl", time.Now().UnixNano())
}

// removeFile removes a file of a Beam file system, if there is one and the
// file system can.
func removeFile(path string) {
	if path == "" {
		return
	}
	ctx := context.Background()
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return
	}
	defer fs.Close()
	if r, ok := fs.(filesystem.Remover); ok {
		r.Remove(ctx, path)
	}
}

// dryRun reports whether Dataflow's --dry_run is set.
func dryRun() bool {
	f := flag.Lookup("dry_run")
	return f != nil && f.Value.String() == "true"
}

// dryRunLog keeps what a runner logs at info level during a dry run, where
// Dataflow's runner logs the job it translated, and passes every message
// on to Beam's usual logger.
type dryRunLog struct {
	mu    sync.Mutex
	infos []string
}

func captureDryRun() *dryRunLog {
	l := &dryRunLog{}
	beamlog.SetLogger(l)
	return l
}

func (l *dryRunLog) Log(ctx context.Context, sev beamlog.Severity, calldepth int, msg string) {
	if sev == beamlog.SevInfo {
		l.mu.Lock()
		l.infos = append(l.infos, msg)
		l.mu.Unlock()
	}
	(&beamlog.Structural{}).Log(ctx, sev, calldepth+1, msg)
}

// job returns the translated job that the runner logged (Dataflow's
// runner logs the job as a JSON object with an environment and a type) and
// how many transforms the pipeline it logged before that has.
func (l *dryRunLog) job() (text, typ string, transforms int) {
	if l == nil {
		return "", "", 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.infos) - 1; i >= 0; i-- {
		var job struct {
			Environment json.RawMessage `json:"environment"`
			Type        string          `json:"type"`
		}
		if json.Unmarshal([]byte(l.infos[i]), &job) != nil || job.Environment == nil || job.Type == "" {
			continue
		}
		for _, m := range l.infos[:i] {
			if strings.HasPrefix(m, "components:") {
				transforms = strings.Count(m, "unique_name:")
			}
		}
		return l.infos[i], job.Type, transforms
	}
	return "", "", 0
}

// report says what a run that ran nothing did: the job a dry run
// translated goes to stdout, one line about it to stderr.
func (l *dryRunLog) report(stdout, stderr io.Writer, runner string) {
	text, typ, transforms := l.job()
	if text == "" {
		fmt.Fprintf(stderr, "beamjoin: the %s runner ran nothing (a dry run?): no summary; --log-level info shows what it logged\n", runner)
		return
	}
	fmt.Fprintln(stdout, text)
	fmt.Fprintf(stderr, "beamjoin: dry run: the pipeline (%d transforms) was translated into a %s %s job, on standard output; nothing was submitted or run\n",
		transforms, runner, strings.ToLower(strings.TrimPrefix(typ, "JOB_TYPE_")))
}

// firstLines is a slog handler that cuts every message to its first line:
// a failed bundle's message holds the whole plan of its stage, tens of
// lines that say nothing to a user of the command. At --log-level debug the
// command leaves messages whole.
type firstLines struct{ slog.Handler }

func (h firstLines) Handle(ctx context.Context, r slog.Record) error {
	short := slog.NewRecord(r.Time, r.Level, firstLine(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if v := a.Value.Resolve(); v.Kind() == slog.KindString || v.Kind() == slog.KindAny {
			if text := fmt.Sprint(v.Any()); strings.Contains(text, "\n") {
				a = slog.String(a.Key, firstLine(text))
			}
		}
		short.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, short)
}

func firstLine(s string) string {
	if first, _, cut := strings.Cut(s, "\n"); cut {
		return first + " …"
	}
	return s
}

func (h firstLines) WithAttrs(as []slog.Attr) slog.Handler {
	return firstLines{h.Handler.WithAttrs(as)}
}

func (h firstLines) WithGroup(name string) slog.Handler { return firstLines{h.Handler.WithGroup(name)} }

// rootCause is the last cause of a pipeline failure, as the SDK chains
// them ("… caused by:\n…"), without the DoFn that reported it: the one
// line that says what went wrong.
func rootCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "caused by:\n"); i >= 0 {
		msg = msg[i+len("caused by:\n"):]
	}
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	last := lines[len(lines)-1]
	return strings.TrimPrefix(last, "beamjoin: ")
}
