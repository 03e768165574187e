package plugintest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/plugintest/exampletest"
)

// Each example controller passes every case when its folder is copied
// alone, which is how people start their own plugin: nothing in it
// reaches outside the folder (the TypeScript one ships its .proto, the
// Python one its generated code, the Go one imports only the public sdk).
// Each copy is set up as its README says, from what is already here: the
// Go one as a module of its own, this repository's sdk standing in for
// the published one, built offline; the TypeScript one compiled again, with
// the node_modules its setup installed.
func TestExamplesPassWhenCopiedAlone(t *testing.T) {
	t.Parallel()
	for _, ex := range []struct {
		name  string
		setUp func(t *testing.T, dir string)
	}{
		{"hello", goModule},
		{"two-step-py", func(*testing.T, string) {}},
		{"two-step-ts", compileTypeScript},
	} {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join("../../examples/controllers", ex.name)
			exampletest.Require(t, src)
			dst := filepath.Join(t.TempDir(), "my-plugin")
			out, err := exec.Command("cp", "-R", src, dst).CombinedOutput()
			require.NoError(t, err, "copy %s: %s", src, out)
			ex.setUp(t, dst)
			requirePasses(t, filepath.Join(dst, "plugin"), ex.name)
		})
	}
}

// goModule makes the Go example copied to dir a module of its own that
// requires the sdk (this repository's, by a replace, with its go.sum: no
// download), runs its tests and builds it to dir/plugin.
func goModule(t *testing.T, dir string) {
	t.Helper()
	sdk, err := filepath.Abs("../../sdk")
	require.NoError(t, err)
	mod := "module example.com/my-plugin\n\ngo 1.26.0\n\nrequire github.com/flowgate/flowgate/sdk v0.0.0\n\nreplace github.com/flowgate/flowgate/sdk => " + sdk + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o600))
	sum, err := os.ReadFile(filepath.Join(sdk, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o600))
	for _, args := range [][]string{{"test", "./..."}, {"build", "-o", "plugin", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %v in the copy: %s\n(offline: a module missing from the cache is fetched by `cd sdk && GOWORK=off go mod download`, as .ci/run does)", args, out)
	}
}

// compileTypeScript compiles the TypeScript example copied to dir again,
// as npm ci there does, with the node_modules copied along.
func compileTypeScript(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "dist")))
	tsc := exec.Command("node", "node_modules/typescript/bin/tsc", "-p", ".")
	tsc.Dir = dir
	out, err := tsc.CombinedOutput()
	require.NoError(t, err, "compile the copy: %s", out)
}
