package host_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxFileLines is where a Go file is too long: a file holds one concept
// (STYLE.md), and one that reaches this many lines holds more than one.
const maxFileLines = 500

// TestGoFilesStaySmall fails when a tracked .go file of the repository,
// tests included, reaches maxFileLines lines, naming the file. Generated
// protobuf code (*.pb.go) is exempt: it is not written by hand.
func TestGoFilesStaySmall(t *testing.T) {
	t.Parallel()
	root := ".."
	cmd := exec.Command("git", "ls-files", "-z", "--", "*.go")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "git ls-files in the repository root: this test reads the tracked files, so run it in a git checkout")
	checked := 0
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" || strings.HasSuffix(name, ".pb.go") {
			continue
		}
		text, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet committed
		}
		require.NoError(t, err)
		checked++
		if n := bytes.Count(text, []byte("\n")); n >= maxFileLines {
			t.Errorf("%s has %d lines, at or over %d: split it into files of one concept each, moving whole functions and types with their doc comments", name, n, maxFileLines)
		}
	}
	require.Greater(t, checked, 100, "git ls-files listed the module's Go files")
}
