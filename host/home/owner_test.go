package home_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/home"
)

// nobody is the uid tests hand files to when they need another user's.
const nobody = 65534

// requireRoot skips a test that must chown files to another user.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user (chown); run the tests as root to cover it")
	}
}

func TestEnsureRefusesAnotherUsersHome(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	dir := t.TempDir()
	require.NoError(t, os.Chown(dir, nobody, nobody))
	err := home.Ensure(dir)
	require.Error(t, err)
	require.Contains(t, err.Error(), "uid 65534")
	require.Contains(t, err.Error(), "not by you")
	require.Contains(t, err.Error(), "chown -R 0 "+dir, "says how to fix it")
}

func TestEnsureRefusesAHomeOthersCanWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	err := home.Ensure(dir)
	require.Error(t, err)
	require.Contains(t, err.Error(), "writable by group or others (mode 0777)")
	require.Contains(t, err.Error(), "chmod go-w "+dir)

	require.NoError(t, os.Chmod(dir, 0o700))
	require.NoError(t, home.Ensure(dir), "the fixed home is accepted")
}

func TestEnsureRefusesAStoreSomeoneElseControls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, home.DBFile)
	require.NoError(t, os.WriteFile(db, nil, 0o600))
	require.NoError(t, os.Chmod(db, 0o666))
	err := home.Ensure(dir)
	require.ErrorContains(t, err, db+" is writable by group or others")

	if os.Getuid() == 0 {
		require.NoError(t, os.Chmod(db, 0o600))
		require.NoError(t, os.Chown(db, nobody, nobody))
		require.ErrorContains(t, home.Ensure(dir), db+" is owned by")
	}
}

func TestEnsureCreatesAPrivateHome(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new")
	require.NoError(t, home.Ensure(dir))
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, home.Ensure(dir), "an existing home of one's own is accepted")
}
