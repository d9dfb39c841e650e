package nexmark

// This file holds the runnable form of the queries: a query by name, its
// rows as JSON lines, and Run, which builds and runs one on a runner.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

func init() {
	register.Function2x1(q3JSON)
	register.Function2x1(q8JSON)
	register.Function2x1(winningBidJSON)
	register.Function2x0(countRow)
}

// Query names a query: Q3, Q8 or Q9 (winning bids).
type Query string

// The queries.
const (
	Q3 Query = "q3"
	Q8 Query = "q8"
	Q9 Query = "q9"
)

// Queries are the names Run takes.
var Queries = []Query{Q3, Q8, Q9}

// Rows adds query q to s over ev, the events of c, and returns its rows as
// JSON lines, a PCollection<string>: the beamjoin version, or with sdkOnly
// the version written with the SDK's transforms alone (Query3SDK, …). Q3
// retains a person for c.SellerReachMs() and Q9 bounds auctions by
// c.MaxAuctionMs(), so that both give the unbounded joins' rows.
func Rows(s beam.Scope, q Query, sdkOnly bool, ev Events, c Config) (beam.PCollection, error) {
	retain := time.Duration(c.SellerReachMs()) * time.Millisecond
	maxAuction := time.Duration(c.MaxAuctionMs()) * time.Millisecond
	switch {
	case q == Q3 && !sdkOnly:
		return beam.ParDo(s, q3JSON, Query3(s, ev, retain)), nil
	case q == Q3:
		return beam.ParDo(s, q3JSON, Query3SDK(s, ev, retain)), nil
	case q == Q8 && !sdkOnly:
		return beam.ParDo(s, q8JSON, Query8(s, ev)), nil
	case q == Q8:
		return beam.ParDo(s, q8JSON, Query8SDK(s, ev)), nil
	case q == Q9 && !sdkOnly:
		return beam.ParDo(s, winningBidJSON, WinningBids(s, ev, maxAuction)), nil
	case q == Q9:
		return beam.ParDo(s, winningBidJSON, WinningBidsSDK(s, ev, maxAuction)), nil
	}
	return beam.PCollection{}, fmt.Errorf("nexmark: query %q: want q3, q8 or q9", q)
}

// One function per row type: Beam registers functions by name, and the
// instances of one generic function share it.
func q3JSON(r Q3Row, emit func(string)) error              { return jsonOf(r, emit) }
func q8JSON(r Q8Row, emit func(string)) error              { return jsonOf(r, emit) }
func winningBidJSON(r WinningBid, emit func(string)) error { return jsonOf(r, emit) }

func jsonOf[T any](row T, emit func(string)) error {
	b, err := json.Marshal(row)
	if err != nil {
		return fmt.Errorf("nexmark: encoding row %+v: %w", row, err)
	}
	emit(string(b))
	return nil
}

// RunConfig is one run of a query on generated events.
type RunConfig struct {
	Query   Query
	SDKOnly bool   // the SDK-only version instead of beamjoin's
	Stream  bool   // unbounded events with a watermark (ReadStream) instead of bounded (Read)
	Out     string // file of JSON rows, "-" for standard output; "" counts rows only
	Runner  string // Beam runner; "" is Prism in process (prismrun.Runner)
	Config  Config
}

// Summary is what a run did.
type Summary struct {
	Query   Query
	SDKOnly bool
	Stream  bool
	Events  int64
	Rows    int64 // from the rows counter, as the runner reports it
	Elapsed time.Duration
}

// EventsPerSecond is the run's throughput: events over wall time.
func (s Summary) EventsPerSecond() float64 {
	return float64(s.Events) / s.Elapsed.Seconds()
}

// String is the summary in one line.
func (s Summary) String() string {
	impl, mode := "beamjoin", "bounded"
	if s.SDKOnly {
		impl = "sdk-only"
	}
	if s.Stream {
		mode = "streaming"
	}
	return fmt.Sprintf("nexmark %s (%s, %s): %d events, %d rows in %.2fs: %.0f events/s",
		s.Query, impl, mode, s.Events, s.Rows, s.Elapsed.Seconds(), s.EventsPerSecond())
}

var rowsCounter = beam.NewCounter("nexmark", "rows")

func countRow(ctx context.Context, _ string) { rowsCounter.Inc(ctx, 1) }

// Run builds the pipeline of rc and runs it: the events of rc.Config from
// Read or ReadStream, the query, its rows to rc.Out. beam.Init must have
// run. The wall time includes building and submitting the pipeline.
func Run(ctx context.Context, rc RunConfig) (Summary, error) {
	if err := rc.Config.Check(); err != nil {
		return Summary{}, err
	}
	c := rc.Config.withDefaults()
	start := time.Now()
	p, s := beam.NewPipelineWithRoot()
	var ev Events
	if rc.Stream {
		ev = ReadStream(s, c, 0)
	} else {
		ev = Read(s, c)
	}
	rows, err := Rows(s, rc.Query, rc.SDKOnly, ev, c)
	if err != nil {
		return Summary{}, err
	}
	beam.ParDo0(s, countRow, rows)
	if rc.Out != "" {
		jsonl.Write(s, rc.Out, rows)
	}
	runner := rc.Runner
	if runner == "" {
		runner = prismrun.Runner
	}
	pr, err := beam.Run(ctx, runner, p)
	sum := Summary{Query: rc.Query, SDKOnly: rc.SDKOnly, Stream: rc.Stream, Events: c.Events, Elapsed: time.Since(start)}
	if err != nil {
		return sum, fmt.Errorf("nexmark: running %s: %w", rc.Query, err)
	}
	if pr != nil {
		for _, r := range pr.Metrics().AllMetrics().Counters() {
			if r.Namespace() == "nexmark" && r.Name() == "rows" {
				sum.Rows += r.Result()
			}
		}
	}
	return sum, nil
}
