package host_test

import (
	"go/build"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is the import path of the flowgate module.
const module = "github.com/flowgate/flowgate"

// forbidden are the parts of the module the gateway must not import: the
// dependency direction is cli → host → {sdk, flows}, and first-party
// plugins reach the gateway only as processes it starts (or values the
// CLI passes in), never as imports.
var forbidden = []string{module + "/plugins", module + "/cli"}

// No package under host/ imports plugins/… or cli/. Tests may (a test
// binary serves as the flowgate executable), so only the packages'
// own files are read.
func TestHostImportsNoPluginOrCLI(t *testing.T) {
	t.Parallel()
	checked := 0
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		if err != nil {
			return err
		}
		checked++
		for _, imp := range pkg.Imports {
			for _, f := range forbidden {
				if imp == f || strings.HasPrefix(imp, f+"/") {
					t.Errorf("host/%s imports %s: host imports only sdk and flows; pass what it needs in from the CLI", filepath.ToSlash(dir), imp)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 5, "the walk found the host packages")
}

// binaries are the commands the module ships.
var binaries = []string{"../cli/flowgate", "../cli/flowgate-shim"}

// No package of the module that a shipped binary links imports testing:
// test helpers that take a testing.TB live in _test files or in packages
// only tests import. (go-plugin's own testing.go links the package
// anyway; that is the library's choice, not ours.)
func TestBinariesLinkNoTestHelpers(t *testing.T) {
	t.Parallel()
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, binaries...)
	out, err := exec.Command("go", args...).Output()
	require.NoError(t, err, "go list the binaries' dependencies")
	checked := 0
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), " ")
		if pkg != module && !strings.HasPrefix(pkg, module+"/") {
			continue
		}
		checked++
		if slices.Contains(strings.Fields(imports), "testing") {
			t.Errorf("%s imports testing and is linked into a shipped binary: move its testing.TB helpers to a _test.go file or a package only tests import", pkg)
		}
	}
	require.Greater(t, checked, 5, "go list found the module's packages")
}
