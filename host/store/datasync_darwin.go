package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f to the disk's platter with F_FULLFSYNC: on macOS a
// plain fsync only hands the data to the drive, which may keep it in its
// volatile cache. (os.File.Sync, which bbolt and the other writers here
// use, does the same on macOS.)
func datasync(f *os.File) error {
	fd := int(f.Fd())
	return fullSync(
		func() error { _, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0); return err },
		func() error { return unix.Fsync(fd) },
	)
}
