package main

// The command on the small sample inputs: a left outer interval join with
// final emission. Results go to standard output (sorted), the counters
// summary to standard error.
func Example() {
	run([]string{"interval",
		"--left", "../../testdata/e2e/left.jsonl", "--right", "../../testdata/e2e/right.jsonl",
		"--key", "id", "--time", "t", "--lower", "0", "--upper", "5m", "--type", "left", "--emit", "final"})
	// Output:
	// {"kind":"pair","key":"a","left":{"id":"a","t":0,"v":"L1"},"right":{"id":"a","t":30000,"v":"R1"},"left_time":0,"right_time":30000,"time":30000}
	// {"kind":"pair","key":"a","left":{"id":"a","t":0,"v":"L1"},"right":{"id":"a","t":90000,"v":"R2"},"left_time":0,"right_time":90000,"time":90000}
	// {"kind":"pair","key":"a","left":{"id":"a","t":60000,"v":"L2"},"right":{"id":"a","t":90000,"v":"R2"},"left_time":60000,"right_time":90000,"time":90000}
	// {"kind":"pair","key":"b","left":{"id":"b","t":120000,"v":"L3"},"right":{"id":"b","t":420000,"v":"R3"},"left_time":120000,"right_time":420000,"time":420000}
	// {"kind":"pair","key":1,"left":{"id":1,"t":200000,"v":"L5"},"right":{"id":1.0,"t":260000,"v":"R6"},"left_time":200000,"right_time":260000,"time":260000}
	// {"kind":"unmatched","key":"c","left":{"id":"c","t":180000,"v":"L4"},"right":null,"left_time":180000,"right_time":null,"time":180000}
	// {"kind":"unmatched","key":"e","left":{"id":"e","t":"1970-01-01T00:05:00Z","v":"L6"},"right":null,"left_time":300000,"right_time":null,"time":300000}
}
