package flows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// A Cache parses a file once while it and its sub-workflows are unchanged,
// and again as soon as any of them changes, even to the same size: what it
// returns is always what Load returns.
func TestCacheParsesAgainOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.lobster")
	child := filepath.Join(dir, "child.lobster")
	write := func(path, text string) {
		t.Helper()
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	}
	write(child, "steps:\n  - id: c\n    run: echo one\n")
	write(main, "steps:\n  - id: a\n    run: echo aaa\n  - id: sub\n    workflow: child.lobster\n")
	var c flows.Cache

	first, err := c.Load(main)
	require.NoError(t, err)
	again, err := c.Load(main)
	require.NoError(t, err)
	require.Same(t, first, again, "an unchanged file was parsed again")

	write(main, "steps:\n  - id: a\n    run: echo bbb\n  - id: sub\n    workflow: child.lobster\n")
	edited, err := c.Load(main)
	require.NoError(t, err)
	require.NotSame(t, first, edited)
	require.Equal(t, "echo bbb", edited.Steps[0].Run, "an edit to the same size was not seen")

	write(child, "steps:\n  - id: c\n    run: echo two\n")
	subEdited, err := c.Load(main)
	require.NoError(t, err)
	require.NotSame(t, edited, subEdited)
	require.Equal(t, "echo two", subEdited.Steps[1].Sub.Steps[0].Run, "an edited sub-workflow was not seen")

	// A symlink pointed elsewhere is a different file, as for Load.
	other := filepath.Join(dir, "other.lobster")
	write(other, "steps:\n  - id: c\n    run: echo two\n")
	require.NoError(t, os.Remove(child))
	require.NoError(t, os.Symlink(other, child))
	relinked, err := c.Load(main)
	require.NoError(t, err)
	require.NotSame(t, subEdited, relinked)
	require.Equal(t, other, relinked.Steps[1].Sub.File)

	// A file that went away fails as Load fails, and is not kept.
	require.NoError(t, os.Remove(main))
	_, err = c.Load(main)
	_, want := flows.Load(main)
	require.Error(t, want)
	require.EqualError(t, err, want.Error())
	write(main, "steps:\n  - id: z\n    run: echo back\n")
	back, err := c.Load(main)
	require.NoError(t, err)
	require.Equal(t, "z", back.Steps[0].ID)
}

// A workflow that does not load is reported by Cache.Load exactly as by
// Load, every time.
func TestCacheReportsABadFileAsLoadDoes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.lobster")
	require.NoError(t, os.WriteFile(path, []byte("steps:\n  - id: a\n"), 0o600))
	var c flows.Cache
	_, want := flows.Load(path)
	require.Error(t, want)
	for range 2 {
		_, err := c.Load(path)
		require.EqualError(t, err, want.Error())
	}
}
