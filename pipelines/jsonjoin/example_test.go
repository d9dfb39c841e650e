package jsonjoin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// An interval join of two small files: a right object joins a left one
// with the same id 0 to 5 minutes after it; left objects without one are
// reported once event time has passed them.
func Example() {
	dir, _ := os.MkdirTemp("", "jsonjoin")
	defer os.RemoveAll(dir)
	fields := jsonl.Fields{Key: "id", Time: "t"}
	c := jsonjoin.Config{
		Op:    jsonjoin.Interval,
		Left:  jsonjoin.Input{Pattern: "../../testdata/e2e/left.jsonl", Fields: fields},
		Right: jsonjoin.Input{Pattern: "../../testdata/e2e/right.jsonl", Fields: fields},
		Lower: 0, Upper: 5 * time.Minute,
		Type: join.LeftOuter, Emit: join.EmitFinal,
		Out: filepath.Join(dir, "out.jsonl"),
	}
	sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := os.ReadFile(c.Out)
	fmt.Print(string(out))
	fmt.Println("left lines read:", sum.Counts["left_read"])
	// Output:
	// {"kind":"pair","key":"a","left":{"id":"a","t":0,"v":"L1"},"right":{"id":"a","t":30000,"v":"R1"},"left_time":0,"right_time":30000,"time":30000}
	// {"kind":"pair","key":"a","left":{"id":"a","t":0,"v":"L1"},"right":{"id":"a","t":90000,"v":"R2"},"left_time":0,"right_time":90000,"time":90000}
	// {"kind":"pair","key":"a","left":{"id":"a","t":60000,"v":"L2"},"right":{"id":"a","t":90000,"v":"R2"},"left_time":60000,"right_time":90000,"time":90000}
	// {"kind":"pair","key":"b","left":{"id":"b","t":120000,"v":"L3"},"right":{"id":"b","t":420000,"v":"R3"},"left_time":120000,"right_time":420000,"time":420000}
	// {"kind":"pair","key":1,"left":{"id":1,"t":200000,"v":"L5"},"right":{"id":1.0,"t":260000,"v":"R6"},"left_time":200000,"right_time":260000,"time":260000}
	// {"kind":"unmatched","key":"c","left":{"id":"c","t":180000,"v":"L4"},"right":null,"left_time":180000,"right_time":null,"time":180000}
	// {"kind":"unmatched","key":"e","left":{"id":"e","t":"1970-01-01T00:05:00Z","v":"L6"},"right":null,"left_time":300000,"right_time":null,"time":300000}
	// left lines read: 6
}
