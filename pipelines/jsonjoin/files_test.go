package jsonjoin_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

// TestCheckFiles checks the files of a config before anything runs:
// inputs that are not readable files, outputs that cannot be written, and
// standard output when the workers are not in this process.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	fields := jsonl.Fields{Key: "k", Time: "t"}
	base := jsonjoin.Config{Op: jsonjoin.Interval, Left: jsonjoin.Input{Pattern: file, Fields: fields},
		Right: jsonjoin.Input{Pattern: file, Fields: fields}, Out: filepath.Join(dir, "out.jsonl")}
	with := func(f func(*jsonjoin.Config)) jsonjoin.Config { c := base; f(&c); return c }
	for _, tc := range []struct {
		name    string
		c       jsonjoin.Config
		workers jsonjoin.Workers
		want    string // the error, "" for none
	}{
		{"fine", base, jsonjoin.InProcess, ""},
		{"stdout_in_process", with(func(c *jsonjoin.Config) { c.Out = "-" }), jsonjoin.InProcess, ""},
		{"glob", with(func(c *jsonjoin.Config) { c.Left.Pattern = filepath.Join(dir, "*.jsonl") }), jsonjoin.InProcess, ""},
		{"existing_output", with(func(c *jsonjoin.Config) { c.Out = file }), jsonjoin.InProcess, ""},
		{"input_directory", with(func(c *jsonjoin.Config) { c.Left.Pattern = dir }), jsonjoin.InProcess,
			`beamjoin: left input "` + dir + `": is a directory; give its files, e.g. '` + dir + `/*.jsonl'`},
		{"input_glob_matches_a_directory", with(func(c *jsonjoin.Config) { c.Right.Pattern = dir + "/r*" }), jsonjoin.InProcess,
			`beamjoin: right input "` + dir + `/r*": matches the directory ` + readOnly},
		{"missing_input", with(func(c *jsonjoin.Config) { c.Left.Pattern = filepath.Join(dir, "none.jsonl") }), jsonjoin.InProcess,
			`beamjoin: left input "` + dir + `/none.jsonl": matches no file`},
		{"output_directory", with(func(c *jsonjoin.Config) { c.Out = dir }), jsonjoin.InProcess,
			`beamjoin: results "` + dir + `": is a directory`},
		{"output_under_a_file", with(func(c *jsonjoin.Config) { c.DeadLetter = file + "/dead.jsonl" }), jsonjoin.SameMachine,
			`beamjoin: dead letters "` + file + `/dead.jsonl": ` + file + ` is a file, not a directory`},
		{"output_in_a_missing_directory", with(func(c *jsonjoin.Config) { c.Late = dir + "/no/such/late.jsonl" }), jsonjoin.InProcess,
			`beamjoin: late elements "` + dir + `/no/such/late.jsonl": the directory ` + dir + `/no/such does not exist`},
		{"stdout_remote", with(func(c *jsonjoin.Config) { c.Out = "" }), jsonjoin.Remote,
			`beamjoin: results "-": the standard output and error of workers that do not run in this process are lost; give a file they can write, such as gs://bucket/out.jsonl, or run them here (--environment_type=LOOPBACK)`},
		{"stderr_on_other_processes", with(func(c *jsonjoin.Config) { c.DeadLetter = jsonl.Stderr }), jsonjoin.SameMachine,
			`beamjoin: dead letters "/dev/stderr": the standard output and error of workers that do not run in this process are lost; give a file they can write, such as gs://bucket/out.jsonl, or run them here (--environment_type=LOOPBACK)`},
		{"local_output_of_remote_workers_is_theirs", with(func(c *jsonjoin.Config) { c.Out = file + "/out.jsonl" }), jsonjoin.Remote, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.CheckFiles(tc.workers)
			if got := errText(err); got != tc.want {
				t.Fatalf("CheckFiles() =\n%s\nwant\n%s", got, tc.want)
			}
			var pe *jsonjoin.PathError
			if err != nil && !errors.As(err, &pe) {
				t.Errorf("error %T is not a *jsonjoin.PathError", err)
			}
		})
	}
	if os.Geteuid() != 0 { // root writes anywhere
		err := with(func(c *jsonjoin.Config) { c.Out = readOnly + "/out.jsonl" }).CheckFiles(jsonjoin.InProcess)
		if want := `beamjoin: results "` + readOnly + `/out.jsonl": cannot write in ` + readOnly + `: permission denied`; errText(err) != want {
			t.Errorf("read-only directory: CheckFiles() = %v, want %s", err, want)
		}
	}
}
