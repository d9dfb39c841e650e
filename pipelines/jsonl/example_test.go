package jsonl_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

// Fields.Parse finds a line's key and event time, or says what is wrong.
func Example() {
	f := jsonl.Fields{Key: "user.id", Time: "ts"}
	for _, line := range []string{
		`{"user":{"id":"u-1"},"ts":1714554000000}`,
		`{"user":{"id":7.0},"ts":"2024-05-01T09:00:00.5Z"}`,
		`{"user":{"id":true},"ts":0}`,
		`{"user":"u-1","ts":0}`,
		`{"user":{"id":"u-1"},"ts":"yesterday"}`,
	} {
		key, ts, err := f.Parse([]byte(line))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println("key", key, "time", ts)
	}
	// Output:
	// key "u-1" time 1714554000000
	// key 7 time 1714554000500
	// error: field "user.id": is a boolean, want a string or a number
	// error: field "user.id": "user" is not an object
	// error: field "ts": "yesterday" is not an RFC 3339 time (want e.g. "2024-05-01T12:00:00Z" or epoch milliseconds)
}

// formatRecord writes a record as "time key file:line".
func formatRecord(et beam.EventTime, key string, r jsonl.Record) string {
	return fmt.Sprintf("%d %s %s:%d", et.Milliseconds(), key, filepath.Base(r.File), r.Line)
}

// formatDeadLetter writes a dead letter as "file:line: error".
func formatDeadLetter(d jsonl.DeadLetter) string {
	return fmt.Sprintf("%s:%d: %s", filepath.Base(d.File), d.Line, d.Error)
}

func init() {
	register.Function3x1(formatRecord)
	register.Function1x1(formatDeadLetter)
}

// Read a file into records and dead letters, and Write both.
func ExampleRead() {
	dir, _ := os.MkdirTemp("", "jsonl")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "events.jsonl")
	os.WriteFile(in, []byte(`{"id":"b","t":2000}
{"id":"a","t":1000}
{"id":"c"}
`), 0o644)

	p, s := beam.NewPipelineWithRoot()
	records, deadLetters := jsonl.Read(s, jsonl.Source{Name: "events", Pattern: in, Fields: jsonl.Fields{Key: "id", Time: "t"}})
	jsonl.Write(s, filepath.Join(dir, "records.txt"), beam.ParDo(s, formatRecord, records))
	jsonl.Write(s, filepath.Join(dir, "dead.txt"), beam.ParDo(s, formatDeadLetter, deadLetters))
	if err := ptest.Run(p); err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"records.txt", "dead.txt"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		fmt.Print(string(b))
	}
	// Output:
	// 1000 "a" events.jsonl:2
	// 2000 "b" events.jsonl:1
	// events.jsonl:3: field "t": missing
}
