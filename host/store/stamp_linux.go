package store

import (
	"os"
	"syscall"
)

// inodeOf returns what identifies the file behind info (its device and
// inode) and when its contents and its inode last changed, in
// nanoseconds since the epoch.
func inodeOf(info os.FileInfo) (dev, ino uint64, mtime, ctime int64, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, 0, false
	}
	return st.Dev, st.Ino, st.Mtim.Nano(), st.Ctim.Nano(), true
}
