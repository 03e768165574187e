package store

import (
	"errors"
	"syscall"
)

// fullSync is the logic of macOS's datasync (datasync_darwin.go), kept
// free of macOS calls so that it is tested on Linux too. It runs
// fullfsync, the F_FULLFSYNC fcntl, again when a signal interrupted it;
// a file system that does not support it (ENOTSUP, ENOTTY, EINVAL: SMB,
// some FUSE and network mounts) gets fsync instead, the best it offers.
func fullSync(fullfsync, fsync func() error) error {
	for {
		err := fullfsync()
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.ENOTTY), errors.Is(err, syscall.EINVAL):
			return fsync()
		}
		return err
	}
}
