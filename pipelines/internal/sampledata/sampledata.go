// Package sampledata keeps the sample inputs of the ready pipelines, which
// their tests generate, in step with the files committed in the
// repository's testdata folder: Check compares them, and with the test flag
// -generate rewrites them.
package sampledata

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var generate = flag.Bool("generate", false, "rewrite the sample inputs in testdata/ with what the generator writes")

// Dir is the repository's testdata folder, as seen from the folder of a
// pipeline's package, where its tests run.
const Dir = "../../testdata"

// Check compares each file, named relative to Dir, with the bytes the
// generator wrote for it, and reports each that differs with the command
// that rewrites it. With -generate it writes them instead.
func Check(t *testing.T, files map[string][]byte) {
	t.Helper()
	for name, want := range files {
		path := filepath.Join(Dir, name)
		if *generate {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the generator writes; run go test ./%s -run %s -generate", path, pkg(), t.Name())
		}
	}
}

// pkg is the folder of the package under test, relative to the repository.
func pkg() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	root, err := filepath.Abs(filepath.Join(Dir, ".."))
	if err != nil {
		return "."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil {
		return "."
	}
	return filepath.ToSlash(rel)
}
