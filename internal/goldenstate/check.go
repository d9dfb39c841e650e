package goldenstate

// The tests' side: writing a new golden file on -write-golden, reading
// one, and comparing it with what the decoders and encoders of today
// make of it.

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var writeName = flag.String("write-golden", "", "write the golden state of today's encoders to testdata/state/`NAME`.hex (a new file only)")

// Path is the golden file of a format version's name, in the package's
// testdata/state/: Path("v1") is testdata/state/v1.hex.
func Path(name string) string { return filepath.Join("testdata", "state", name+".hex") }

// Write writes f to Path(NAME) when the test binary runs with
// -write-golden=NAME, and skips t otherwise. It never overwrites a file:
// golden files are frozen.
func Write(t testing.TB, f File) {
	t.Helper()
	if *writeName == "" {
		t.Skip("no -write-golden")
	}
	path := Path(*writeName)
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists: golden files are frozen", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f.Format(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Read returns the records of the golden file at path, and fails t when
// it cannot.
func Read(t testing.TB, path string) []Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	records, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// Check decodes every record of the golden file at path with decode and
// compares the values, by their records' keys (Record.Key), with want:
// the file must hold each wanted value once and nothing else. opts are
// go-cmp's options for the comparison.
func Check[T any](t testing.TB, path string, want map[string]T, decode func(Record) (T, error), opts ...cmp.Option) {
	t.Helper()
	got := map[string]T{}
	seen := map[string]bool{}
	for _, r := range Read(t, path) {
		if seen[r.Key()] {
			t.Errorf("%s: %s twice", path, r.Key())
		}
		seen[r.Key()] = true
		v, err := decode(r)
		if err != nil {
			t.Errorf("%s: %s: %v", path, r.Key(), err)
			continue
		}
		got[r.Key()] = v
	}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("%s decoded (-want +got):\n%s", path, diff)
	}
}

// CheckBytes checks that today's encoders, which made f, still write
// the golden file at path byte for byte: a change to a format must raise
// its version and add a file, not change what a version means.
func CheckBytes(t testing.TB, path string, f File) {
	t.Helper()
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(golden), string(f.Format())); diff != "" {
		t.Errorf("today's encoders no longer write %s (-golden +today):\n%s", path, diff)
	}
}
