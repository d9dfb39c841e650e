package goldenstate

// The text of a golden file: writing it (File.Format) and reading it
// (Parse).

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
)

// A Record is one named value of a golden file: a key's bag, its chunks
// in bag order, or a single encoded value (one chunk).
type Record struct {
	// Kind says what the value is, and so how it is decoded: "bag",
	// "bucket", "cursor", "clock". It holds no space.
	Kind string
	// Name says which of the kind's shapes the value has. It may hold
	// spaces, not a line break.
	Name   string
	Chunks [][]byte
}

// Key is the record's line in its file, "KIND NAME": the key of the
// values that Check wants.
func (r Record) Key() string { return r.Kind + " " + r.Name }

// A File is what a golden file holds.
type File struct {
	// Header says what the file holds, in lines without their "# ".
	Header  []string
	Records []Record
}

// frozen is the last line of every file's header.
const frozen = "Frozen: a later release must decode it as golden_test.go says."

// Format returns f as the text of a golden file: its header as comments,
// then the line that says the file is frozen, then each record's line
// and its chunks in hex.
func (f File) Format() []byte {
	var b bytes.Buffer
	for _, line := range append(f.Header, frozen) {
		fmt.Fprintf(&b, "# %s\n", line)
	}
	for _, r := range f.Records {
		fmt.Fprintf(&b, "%s\n", r.Key())
		for _, c := range r.Chunks {
			fmt.Fprintf(&b, "%x\n", c)
		}
	}
	return b.Bytes()
}

// Parse returns the records of the golden file text data, read from the
// file name (for its errors); comments and empty lines are passed over.
func Parse(name string, data []byte) ([]Record, error) {
	var records []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if kind, recName, ok := strings.Cut(line, " "); ok {
			if kind == "" || recName == "" {
				return nil, fmt.Errorf("goldenstate: %s:%d: a record's line is KIND NAME, not %q", name, n, line)
			}
			records = append(records, Record{Kind: kind, Name: recName})
			continue
		}
		c, err := hex.DecodeString(line)
		if err != nil || len(records) == 0 {
			return nil, fmt.Errorf("goldenstate: %s:%d: not a chunk in hex after a record's line: %q", name, n, line)
		}
		records[len(records)-1].Chunks = append(records[len(records)-1].Chunks, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("goldenstate: %s: %w", name, err)
	}
	return records, nil
}
