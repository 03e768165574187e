package shim

import "os"

// datasync makes f's data durable. macOS has no fdatasync; File.Sync
// is fcntl(F_FULLFSYNC), as bbolt uses there.
func datasync(f *os.File) error { return f.Sync() }
