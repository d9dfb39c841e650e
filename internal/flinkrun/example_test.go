package flinkrun_test

import (
	"fmt"
	"strings"

	"github.com/beamjoin/beamjoin/internal/flinkrun"
)

// The java command line of a job server: Flink's embedded cluster on free
// loopback ports, configured from a directory that Start writes.
func ExampleConfig_Args() {
	args := flinkrun.Config{Classpath: "/path/to/classpath"}.Args("/tmp/conf")
	fmt.Println(args[0])
	fmt.Println(strings.Join(args[len(args)-9:len(args)-2], " "))
	// Output:
	// -Xmx2048m
	// org.apache.beam.runners.flink.FlinkJobServerDriver --flink-master=[local] --flink-conf-dir=/tmp/conf --job-host=localhost --job-port=0 --artifact-port=0 --expansion-port=0
}
