package join_test

// This file checks the packages' import rule (docs/design/packages.md):
// join → engines → shared packages and the matching cores, read from
// go list.

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	module   = "github.com/beamjoin/beamjoin/"
	joinPkg  = module + "transforms/join"
	internal = joinPkg + "/internal/"
)

// The packages under transforms/join/internal, each an engine or a shared
// package: a package added there is classified here.
var (
	engines = []string{"interval", "asof", "windowed", "multiway"}
	shared  = []string{"raw", "timertag", "runnerkey", "bounded", "windowing", "bagstate", "statetest"}
	// cores are the matching cores, which import nothing of the joins.
	cores = []string{module + "transforms/internal/match", module + "transforms/internal/panes"}
)

// listedPackage is what go list says of a package.
type listedPackage struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// TestImportsRunOneWay reads the imports of join, of every package under
// transforms/join/internal and of the matching cores, their tests'
// included, and fails naming each import that breaks the rule: no engine
// imports another engine, a shared package imports no engine, nothing
// below join imports join, the cores import nothing of the joins, and
// only tests import statetest.
func TestImportsRunOneWay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages with")
	}
	args := append([]string{"list", "-json=ImportPath,Imports,TestImports,XTestImports", joinPkg, internal + "..."}, cores...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	listed := map[string]bool{}
	for _, p := range pkgs {
		listed[p.ImportPath] = true
		for _, e := range importErrors(p) {
			t.Error(e)
		}
	}
	for _, name := range slices.Concat(engines, shared) {
		if !listed[internal+name] {
			t.Errorf("transforms/join/internal/%s, which the rule names, is not a package", name)
		}
	}
}

// TestImportErrorsNameTheOffender checks the rule on made-up imports: each
// broken one is named with the rule it breaks.
func TestImportErrorsNameTheOffender(t *testing.T) {
	for _, tc := range []struct {
		name string
		pkg  listedPackage
		want []string
	}{
		{"engine_imports_shared_and_core", listedPackage{ImportPath: internal + "asof", Imports: []string{internal + "raw", cores[0], "fmt"}}, nil},
		{"engine_imports_engine", listedPackage{ImportPath: internal + "asof", Imports: []string{internal + "interval"}},
			[]string{"transforms/join/internal/asof imports transforms/join/internal/interval: no engine imports another engine"}},
		{"engine_test_imports_engine", listedPackage{ImportPath: internal + "asof", XTestImports: []string{internal + "asof", internal + "windowed"}},
			[]string{"transforms/join/internal/asof's tests import transforms/join/internal/windowed: no engine imports another engine"}},
		{"shared_imports_engine", listedPackage{ImportPath: internal + "bounded", Imports: []string{internal + "interval"}},
			[]string{"transforms/join/internal/bounded imports transforms/join/internal/interval: a shared package imports no engine"}},
		{"engine_imports_join", listedPackage{ImportPath: internal + "windowed", Imports: []string{joinPkg}},
			[]string{"transforms/join/internal/windowed imports transforms/join: nothing under transforms/join imports join"}},
		{"core_imports_core", listedPackage{ImportPath: cores[1], Imports: []string{cores[0]}, TestImports: []string{cores[1]}}, nil},
		{"core_imports_shared", listedPackage{ImportPath: cores[1], Imports: []string{internal + "raw"}},
			[]string{"transforms/internal/panes imports transforms/join/internal/raw: the matching cores import nothing of the joins"}},
		{"code_imports_statetest", listedPackage{ImportPath: joinPkg, Imports: []string{internal + "statetest"}, TestImports: []string{internal + "statetest"}},
			[]string{"transforms/join imports transforms/join/internal/statetest: only tests import statetest"}},
		{"unclassified", listedPackage{ImportPath: internal + "hotkeys"},
			[]string{"transforms/join/internal/hotkeys is neither an engine nor a shared package: classify it in layout_test.go and docs/design/packages.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := importErrors(tc.pkg); !slices.Equal(got, tc.want) {
				t.Errorf("importErrors = %q, want %q", got, tc.want)
			}
		})
	}
}

// kind is what the rule calls package path: "join", "engine", "shared",
// "core", "outside" (not a package of the joins), or "" (under
// transforms/join/internal, but not classified).
func kind(path string) string {
	switch {
	case path == joinPkg:
		return "join"
	case slices.Contains(cores, path):
		return "core"
	case !strings.HasPrefix(path, internal):
		return "outside"
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(path, internal), "/")
	switch {
	case slices.Contains(engines, name):
		return "engine"
	case slices.Contains(shared, name):
		return "shared"
	}
	return ""
}

// importErrors are the imports of p, each of its own code and then of its
// tests, that break the rule.
func importErrors(p listedPackage) []string {
	from := kind(p.ImportPath)
	short := func(path string) string { return strings.TrimPrefix(path, module) }
	if from == "" {
		return []string{short(p.ImportPath) + " is neither an engine nor a shared package: classify it in layout_test.go and docs/design/packages.md"}
	}
	var errs []string
	check := func(imports []string, test bool) {
		for _, imp := range imports {
			to := kind(imp)
			var why string
			switch {
			case to == "outside":
				continue
			case to == "join" && from != "join":
				why = "nothing under transforms/join imports join"
			case from == "core" && to != "core":
				why = "the matching cores import nothing of the joins"
			case from == "engine" && to == "engine" && imp != p.ImportPath:
				why = "no engine imports another engine"
			case from == "shared" && to == "engine":
				why = "a shared package imports no engine"
			case strings.HasSuffix(imp, "/statetest") && !test:
				why = "only tests import statetest"
			default:
				continue
			}
			where, verb := short(p.ImportPath), " imports "
			if test {
				where, verb = where+"'s tests", " import "
			}
			errs = append(errs, where+verb+short(imp)+": "+why)
		}
	}
	check(p.Imports, false)
	check(append(p.TestImports, p.XTestImports...), true)
	return errs
}
