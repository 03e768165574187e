package pluginnew

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryLanguageRenames writes each language's plugin: every rename
// still finds the example's name, and the name is gone from the files
// (but the README, which says where the plugin came from).
func TestEveryLanguageRenames(t *testing.T) {
	for _, lang := range Langs {
		dir := filepath.Join(t.TempDir(), "p")
		files, err := Write(dir, "my-plugin", lang, "v0.0.0")
		require.NoError(t, err, lang)
		for _, f := range files {
			if f == "README.md" {
				continue // it names the example it came from
			}
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			for _, old := range []string{"two-step-py", "two-step-ts", `Name: "hello"`} {
				require.NotContains(t, string(b), old, "%s: %s", lang, f)
			}
		}
		if lang == "go" {
			mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			require.NoError(t, err)
			require.Equal(t, "module my-plugin\n\ngo "+GoVersion+"\n\nrequire github.com/flowgate/flowgate/sdk v0.0.0\n", string(mod))
		}
		if info, err := os.Stat(filepath.Join(dir, "plugin")); err == nil {
			require.NotZero(t, info.Mode()&0o100, "%s: plugin is executable", lang)
		}
	}
}

// TestGoVersionIsFlowgates keeps a new Go plugin's go directive the one
// of the module it requires, the sdk.
func TestGoVersionIsFlowgates(t *testing.T) {
	b, err := os.ReadFile("../../sdk/go.mod")
	require.NoError(t, err)
	require.Contains(t, strings.Split(string(b), "\n"), "go "+GoVersion)
}

func TestWriteRefusesBadInput(t *testing.T) {
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "keep"), nil, 0o600))
	for _, c := range []struct{ dir, name, lang, want string }{
		{t.TempDir(), "x", "rust", `no template for language "rust": use --lang with one of go, python, ts`},
		{t.TempDir(), "My Plugin", "go", `plugin name "My Plugin": use lower-case letters`},
		{full, "x", "go", "is not empty: give a new folder with --dir"},
	} {
		_, err := Write(c.dir, c.name, c.lang, "v0.0.0")
		require.ErrorContains(t, err, c.want)
	}
	entries, err := os.ReadDir(full)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing written into a folder that was not empty")
}
