// This file holds where a run's workers are, and the checks of the files a
// join reads and writes that Run makes before it builds anything, so that
// a wrong name fails at once rather than after the join has run.

package jsonjoin

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

// Workers says where a runner's SDK workers run, which decides what of
// this process they share: its files, its standard output, its memory.
type Workers int

const (
	// Remote workers share nothing with this process but file systems
	// such as gs://: Flink, Dataflow, a job server with PROCESS, EXTERNAL or
	// DOCKER workers.
	Remote Workers = iota
	// SameMachine workers are other processes on this machine: Prism in
	// process with PROCESS workers. They share its files.
	SameMachine
	// InProcess workers run in this process (LOOPBACK, Prism's default):
	// they share its files, its standard output and its memory.
	InProcess
)

// WorkersOf says where the named runner's workers run, as Beam's flags
// --environment_type and --endpoint set them up (it reads them, and
// changes none).
func WorkersOf(runner string) Workers {
	env := strings.ToLower(*jobopts.EnvironmentType)
	if env == "loopback" {
		return InProcess
	}
	switch runner {
	case "", "prism", "PrismRunner", prismrun.Runner:
		// Prism in process, unless --endpoint names a job server; its
		// workers are LOOPBACK unless --environment_type says otherwise.
		if *jobopts.Endpoint != "" {
			return Remote
		}
		if env == "" {
			return InProcess
		}
		if env == "process" {
			return SameMachine
		}
	}
	return Remote
}

// PathError is a file of a Config that cannot be read or written. Field
// is the Config field that names it: Left, Right, Inputs[I], Out, Late or
// DeadLetter.
type PathError struct {
	Field string
	Path  string
	Err   error
	what  string // the file in words: "left input", "input 2", "results"
}

// Error names the file, what it is for, and what is wrong with it.
func (e *PathError) Error() string {
	return fmt.Sprintf("beamjoin: %s %q: %v", e.what, e.Path, e.Err)
}

// Unwrap returns the file system's error.
func (e *PathError) Unwrap() error { return e.Err }

// fieldWords name a Config's outputs in errors (its inputs are named by
// their sides' words).
var fieldWords = map[string]string{
	"Out": "results", "Late": "late elements", "DeadLetter": "dead letters",
}

// isStdio reports whether path names this process's standard output or
// error, as Write takes them.
func isStdio(path string) bool {
	switch path {
	case "-", jsonl.Stdout, jsonl.Stderr, "/dev/fd/1", "/dev/fd/2":
		return true
	}
	return false
}

// CheckFiles reports, as a *PathError, an input that is not a file or
// that cannot be read, and an output that cannot be written: standard
// output or error when the workers are not in this process (theirs is
// lost), and, when they share this machine's files, a local file whose
// directory is missing or not writable, or that is a directory. It
// writes nothing.
func (c Config) CheckFiles(w Workers) error { return checkFiles(c.files(c.sides()), w) }

// namedPath is a file, a glob or a Pub/Sub name that a Config gives, with
// the Config field that gives it and the file in words, as PathError names
// them, and whether it is one of the join's inputs.
type namedPath struct {
	field, words, path string
	input              bool
}

// files are the inputs, c's route's sides, and the outputs that c names,
// inputs first; an output that is not given is "", except Out, which is
// then standard output.
func (c Config) files(sides []side) []namedPath {
	var files []namedPath
	for _, sd := range sides {
		files = append(files, namedPath{field: sd.field, words: sd.words, path: sd.in.Pattern, input: true})
	}
	for _, out := range []namedPath{{field: "Out", path: cmp.Or(c.Out, "-")}, {field: "Late", path: c.Late}, {field: "DeadLetter", path: c.DeadLetter}} {
		out.words = fieldWords[out.field]
		files = append(files, out)
	}
	return files
}

// checkFiles is CheckFiles of the named files.
func checkFiles(files []namedPath, w Workers) error {
	for _, f := range files {
		var err error
		switch _, pubsub := pubsubName(f.path); {
		case pubsub:
		case f.input:
			err = checkInput(f.path)
		case f.path == "": // an output not given
		case isStdio(f.path) && w != InProcess:
			err = errors.New("the standard output and error of workers that do not run in this process are lost; give a file they can write, such as gs://bucket/out.jsonl, or run them here (--environment_type=LOOPBACK)")
		case isStdio(f.path), !isLocal(f.path), w == Remote:
		default:
			err = checkOutput(f.path)
		}
		if err != nil {
			return &PathError{Field: f.field, Path: f.path, Err: err, what: f.words}
		}
	}
	return nil
}

func isLocal(path string) bool { return !strings.Contains(path, "://") }

// checkInput checks that a local pattern names files that can be read;
// a pattern in another file system is left to the reader.
func checkInput(pattern string) error {
	if !isLocal(pattern) {
		return nil
	}
	names, err := filepath.Glob(pattern)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return errors.New("matches no file")
	}
	for _, n := range names {
		fi, err := os.Stat(n)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if n == pattern {
				return fmt.Errorf("is a directory; give its files, e.g. '%s'", filepath.Join(n, "*.jsonl"))
			}
			return fmt.Errorf("matches the directory %s", n)
		}
		f, err := os.Open(n)
		if err != nil {
			return err
		}
		f.Close()
	}
	return nil
}

// checkOutput checks that a local file can be written, without writing
// it: it exists and can be opened for writing, or its directory exists and
// a file can be made there.
func checkOutput(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a directory")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return err
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		// Say which part of the path is wrong.
		for d := dir; ; d = filepath.Dir(d) {
			fi, err := os.Stat(d)
			if err == nil && !fi.IsDir() {
				return fmt.Errorf("%s is a file, not a directory", d)
			}
			if err == nil || d == filepath.Dir(d) {
				return fmt.Errorf("the directory %s does not exist", dir)
			}
		}
	}
	f, err := os.CreateTemp(dir, ".beamjoin-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write in %s: %v", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
