package shim

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync makes f's data durable: fdatasync, which skips the metadata
// a reader does not need (the modification time), as bbolt does on Linux.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
