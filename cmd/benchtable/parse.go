package main

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// results holds every figure of a `go test -bench` output: by benchmark
// name (without the GOMAXPROCS suffix) and unit, the values of its runs.
type results map[string]map[string][]float64

// benchLine is a result line: name, iterations, then value-unit pairs.
// benchName is a result line's start, and figures its end: a log line
// written during a benchmark lands between the two.
var (
	benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(\S+ \S+.*)$`)
	benchName = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?(\s|$)`)
	figures   = regexp.MustCompile(`^(\d+)\s+(\S+ \S+.*)$`)
)

// parse reads benchmark output. Lines that are not results (headers, PASS,
// logs) are skipped, so the raw file can hold several packages' runs.
func parse(r io.Reader) (results, error) {
	out := results{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	pending := "" // a benchmark whose figures have not come yet
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var name, rest string
		if m := benchLine.FindStringSubmatch(line); m != nil {
			name, rest, pending = m[1], m[3], ""
		} else if m := benchName.FindStringSubmatch(line); m != nil {
			pending = m[1]
			continue
		} else if m := figures.FindStringSubmatch(line); m != nil && pending != "" {
			name, rest, pending = pending, m[2], ""
		} else {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields)%2 != 0 {
			continue
		}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			if out[name] == nil {
				out[name] = map[string][]float64{}
			}
			out[name][fields[i+1]] = append(out[name][fields[i+1]], v)
		}
	}
	return out, sc.Err()
}

// median returns the median of the named benchmark's values in unit, and
// whether there were any.
func (r results) median(name, unit string) (float64, bool) {
	return median(r[name][unit])
}

// runs returns how many values the named benchmark has in unit.
func (r results) runs(name, unit string) int { return len(r[name][unit]) }

// matching returns the benchmark names with the prefix, sorted.
func (r results) matching(prefix string) []string {
	var out []string
	for name := range r {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
