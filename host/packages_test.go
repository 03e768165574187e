package host_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestArchitectureNamesEveryPackage fails naming each package of the
// repository (both modules, test-helper packages too) that
// docs/architecture.md does not name in backquotes: that page is where a
// newcomer finds what a package is for, so a package it leaves out is
// one nobody can place.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/architecture.md")
	require.NoError(t, err)
	cmd := exec.Command("go", "list", "./...", "./sdk/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "go list ./... ./sdk/...: %s", stderr)
	pkgs := strings.Fields(string(out))
	require.Greater(t, len(pkgs), 40, "go list found the packages")
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p, module+"/")
		if !strings.Contains(string(doc), "`"+rel+"`") {
			t.Errorf("docs/architecture.md does not name package %s: add a line for `%s` to its table of packages, saying what it is", p, rel)
		}
	}
}
