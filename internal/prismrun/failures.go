package prismrun

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
)

// A third way the stuck job shows itself: Prism's stage dump names the
// keys it holds as raw bytes, which are seldom UTF-8, and its job service
// then cannot send the failure to the client at all. The client sees only
// gRPC's refusal (unsendable), and the failure itself reaches nothing but
// Prism's "job failed" log line. Prism runs in this process, so its log
// passes through the process's default slog handler; failureLog wraps that
// handler, keeps the last failure Prism logged, and Run puts it back in
// place of gRPC's refusal (recovered).

// unsendable is what gRPC answers when a message it is asked to send has a
// string field that is not UTF-8.
const unsendable = "grpc: error while marshaling: string field contains invalid UTF-8"

// failureLog is the slog handler that keeps Prism's last logged job
// failure, numbered so that Run can tell whether one came during its run.
type failureLog struct {
	inner slog.Handler
}

var logged struct {
	sync.Mutex
	n   int
	err error
}

// Enabled reports whether the wrapped handler wants records of level l;
// records of level error are always wanted, since Prism logs a job's
// failure at that level.
func (h failureLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.inner.Enabled(ctx, l)
}

// Handle keeps the error of a "job failed" record and passes the record
// on to the wrapped handler when it wants it.
func (h failureLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "job failed" {
		r.Attrs(func(a slog.Attr) bool {
			if err, ok := a.Value.Any().(error); ok && a.Key == "error" {
				logged.Lock()
				logged.n++
				logged.err = err
				logged.Unlock()
				return false
			}
			return true
		})
	}
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs returns the handler with attrs added to the wrapped one.
func (h failureLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return failureLog{h.inner.WithAttrs(attrs)}
}

// WithGroup returns the handler with the group opened in the wrapped one.
func (h failureLog) WithGroup(name string) slog.Handler {
	return failureLog{h.inner.WithGroup(name)}
}

var watching sync.Mutex

// watchFailures puts failureLog around the default slog handler, unless
// it is there already (Beam sets a new default handler when it sets up
// its log, so Run checks before every attempt), and returns the number of
// the last failure logged so far.
func watchFailures() int {
	watching.Lock()
	if _, ok := slog.Default().Handler().(failureLog); !ok {
		slog.SetDefault(slog.New(failureLog{slog.Default().Handler()}))
	}
	watching.Unlock()
	logged.Lock()
	defer logged.Unlock()
	return logged.n
}

// recovered returns err, or, when err is gRPC's refusal to send a failure
// that is not UTF-8 and Prism logged a failure after failure number since,
// the logged failure with the refusal noted after it. Jobs run at the same
// time in one process share the log, so the failure is the last logged by
// any of them; tests run their pipelines one at a time.
func recovered(err error, since int) error {
	if err == nil || !strings.Contains(err.Error(), unsendable) {
		return err
	}
	logged.Lock()
	n, failure := logged.n, logged.err
	logged.Unlock()
	if n == since || failure == nil {
		return err
	}
	return errors.Join(failure, errors.New("(Prism could not send this failure to its client: "+err.Error()+")"))
}
