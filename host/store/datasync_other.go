//go:build !linux

package store

import "os"

// datasync flushes f to stable storage, as bbolt does outside Linux.
func datasync(f *os.File) error {
	return f.Sync()
}
