package jsonjoin

// StreamingBatch returns c with an interval join of files read whole run on
// the streaming path instead of join.Bounded, for benchmarks.
func StreamingBatch(c Config) Config {
	c.streamingBatch = true
	return c
}
