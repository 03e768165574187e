package shim

import (
	"os"
	"time"
)

// progressWatch tells when a task stopped reporting progress: it is armed
// by the first growth of the progress file during this attempt (what an
// earlier attempt wrote does not count), and stalls when the file then
// does not grow for limit. A file that shrinks was truncated by someone
// else; its new size is the new baseline.
type progressWatch struct {
	path  string
	limit time.Duration
	size  int64
	armed bool
	grew  time.Time
}

// newProgressWatch takes the file's current size as the baseline; call it
// before the child starts, so that no early growth is missed.
func newProgressWatch(path string, limit time.Duration) progressWatch {
	return progressWatch{path: path, limit: limit, size: fileSize(path)}
}

// stalled looks at the file at time now and reports whether the limit is
// exceeded.
func (p *progressWatch) stalled(now time.Time) bool {
	size := fileSize(p.path)
	if size > p.size {
		p.armed, p.grew = true, now
	}
	p.size = size
	return p.armed && now.Sub(p.grew) >= p.limit
}

// fileSize is the size of the file at path, 0 when there is none or it
// is not a regular file (a task's link to a file elsewhere, or a named
// pipe, reports no progress).
func fileSize(path string) int64 {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return fi.Size()
}

// privateProgress makes the task's progress file at path private (mode
// 0600) when the task made it with another mode: a task that appends to
// $FLOWGATE_PROGRESS with the shell's >> creates the file with its own
// umask's mode, since nothing creates it before the task writes to it.
// The file sits in the task's directory, mode 0700, so no other user can
// reach it meanwhile; the shim calls privateProgress once the task's
// process group is gone, before it records the status. It does not
// follow a symbolic link (the task's own files elsewhere keep their
// modes) and does not block on a FIFO. No file, or an empty path, is
// left as it is: the task wrote no progress.
func privateProgress(path string) {
	if path == "" {
		return
	}
	f, err := OpenTaskFile(path)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm() != 0o600 {
		_ = f.Chmod(0o600)
	}
}
