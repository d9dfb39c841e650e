package jsonjoin

// StreamingBatch returns c with a join of files read whole run on the path
// of a stream (see Config.streamingBatch), for benchmarks.
func StreamingBatch(c Config) Config {
	c.streamingBatch = true
	return c
}
