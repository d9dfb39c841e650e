package flinkrun

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
)

// streamingImpulseURN is the Flink runner's own periodic impulse, a
// native Flink source (StreamingImpulseSource in beam-runners-flink).
const streamingImpulseURN = "flink:transform:streaming_impulse:v1"

// Ticks returns an unbounded PCollection<[]byte> of n ticks, one every
// interval, from a source that Flink runs itself: each tick is the decimal
// text of a counter, and the ticks are spread over the source's parallel
// subtasks. It runs on Flink only (Prism refuses the transform).
//
// It exists because Beam 2.62's Flink runner cannot checkpoint a Go
// splittable DoFn's stream while it runs (docs/runners.md): with
// checkpointing on, a splittable DoFn reader never resumes, and with it
// off, the runner plays the reader's whole stream when its input ends.
// The source emits no watermark until it ends, and does not keep its
// counter in checkpoints: after a restore it counts from zero again.
func Ticks(s beam.Scope, n int, interval time.Duration) beam.PCollection {
	s = s.Scope("flinkrun.Ticks")
	payload, _ := json.Marshal(map[string]int{"interval_ms": int(interval / time.Millisecond), "message_count": n})
	bytes := typex.New(reflect.TypeOf([]byte(nil)))
	return beam.External(s, streamingImpulseURN, payload, nil, []beam.FullType{bytes}, false)[0]
}
