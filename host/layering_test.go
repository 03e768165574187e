package host_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
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
