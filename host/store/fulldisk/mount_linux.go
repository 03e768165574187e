package fulldisk

import (
	"errors"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size bytes, mode 0700, on dir.
func mountTmpfs(t testing.TB, dir string, size int64) {
	t.Helper()
	mount(t, "tmpfs", dir, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)+",mode=0700")
}

// bindMount puts the file at src in place of the file at dst.
func bindMount(t testing.TB, src, dst string) {
	t.Helper()
	mount(t, src, dst, "", unix.MS_BIND, "")
}

// mount mounts source on target until the test ends, skipping the test
// where mounting is not allowed.
func mount(t testing.TB, source, target, fstype string, flags uintptr, data string) {
	t.Helper()
	if err := unix.Mount(source, target, fstype, flags, data); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("this test needs a small disk to fill, and mounting one is not allowed here (%v): run it as root or with CAP_SYS_ADMIN", err)
		}
		t.Fatalf("mount %s on %s: %v", source, target, err)
	}
	t.Cleanup(func() {
		// Lazy, so that a file a failed test left open does not keep the
		// mount (and the temporary directory) in place.
		if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
}
