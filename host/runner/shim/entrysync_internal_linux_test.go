package shim

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// ext4Driver reports, independently of entrySyncedWithFile, whether the
// ext4 driver mounted dir's file system: its mount's type in
// /proc/self/mountinfo is ext4 (that file names the driver, where
// statfs's magic number does not).
func ext4Driver(t *testing.T, dir string) bool {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(dir, &st))
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	want := strconv.FormatUint(uint64(unix.Major(st.Dev)), 10) + ":" + strconv.FormatUint(uint64(unix.Minor(st.Dev)), 10)
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		// id parent major:minor root mountpoint options ... - type source super
		if len(f) < 10 || f[2] != want {
			continue
		}
		for i, v := range f {
			if v == "-" && i+1 < len(f) {
				return f[i+1] == "ext4"
			}
		}
	}
	return false
}

// The claim skips its directory's sync exactly where the ext4 driver
// makes the record's sync carry its entry, and nowhere else.
func TestEntrySyncedWithFileOnlyUnderTheExt4Driver(t *testing.T) {
	dirs := []string{t.TempDir(), "/proc", "/sys"}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dirs = append(dirs, "/dev/shm")
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	sawExt4 := false
	for _, dir := range dirs {
		want := ext4Driver(t, dir)
		sawExt4 = sawExt4 || want
		f, err := os.Open(dir)
		require.NoError(t, err)
		require.Equal(t, want, entrySyncedWithFile(f), dir)
		require.Equal(t, want, entrySyncedWithFile(f), "%s, asked again (kept per device)", dir)
		require.NoError(t, f.Close())
	}
	closed, err := os.Open(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.False(t, entrySyncedWithFile(closed), "a file closed already")
	t.Logf("an ext4 file system among %v: %v", dirs, sawExt4)
}
