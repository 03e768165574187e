package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Held reports whether a process holds the store file at path open for
// writing right now, without waiting: it returns an error wrapping
// ErrLocked that names the holder (as Open's does) when one does, and nil
// when the file is free, missing, or held only by readers. It takes and
// drops a shared lock, so it never blocks a writer for longer than the
// call. A process that finds the store held while no gateway answers may
// be looking at a gateway that is starting: it holds the store before it
// serves its socket.
func Held(path string) error {
	path, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("store: resolve %s: %w", path, err)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	switch {
	case err == nil:
		return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	case errors.Is(err, syscall.EWOULDBLOCK):
		return &lockedError{path: path, holder: readHolder(path)}
	}
	return fmt.Errorf("store: probe the lock on %s: %w", path, err)
}
