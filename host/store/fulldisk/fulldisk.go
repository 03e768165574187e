// Package fulldisk gives tests a real full disk: a small tmpfs mounted for
// the test, and a filler file that takes all the space left on it until
// the test removes it.
//
// # Use
//
//	dir := fulldisk.Mount(t, 2<<20) // skips where mounting is not allowed
//	// ... open a store under dir, queue work ...
//	filler := fulldisk.Fill(t, dir)
//	// ... writes fail with ENOSPC ...
//	filler.Free(t)
//	// ... writes resume ...
package fulldisk

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes (mode 0700) on a new directory for the
// length of the test and returns that directory. Where mounting is not
// allowed (not root, no CAP_SYS_ADMIN, a container without it) the test is
// skipped with a message that says so.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	mountTmpfs(t, dir, size)
	return dir
}

// BindFile puts the file at src (on a disk from Mount, say) in place of the
// file at dst for the length of the test, with a bind mount, creating both
// if they do not exist. A store at dst then lives on src's disk while
// everything next to it stays where it is. It skips the test where
// mounting is not allowed.
func BindFile(t testing.TB, src, dst string) {
	t.Helper()
	for _, p := range []string{src, dst} {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatalf("create %s to bind: %v", p, err)
		}
		f.Close()
	}
	bindMount(t, src, dst)
}

// Filler is a file that holds all the free space of its disk.
type Filler struct{ path string }

// Fill writes a filler file under dir until its disk has no byte left
// (ENOSPC) and returns it. It fails the test on any other error.
func Fill(t testing.TB, dir string) *Filler {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("create the filler file: %v", err)
	}
	defer f.Close()
	// Large chunks first, then page-sized ones for the tail the large
	// ones cannot take.
	for _, chunk := range []int{256 << 10, 4 << 10, 512} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill the disk: %v", err)
				}
				break
			}
		}
	}
	return &Filler{path: path}
}

// Free removes the filler file, giving its space back.
func (f *Filler) Free(t testing.TB) {
	t.Helper()
	if err := os.Remove(f.path); err != nil {
		t.Fatalf("remove the filler file: %v", err)
	}
}
