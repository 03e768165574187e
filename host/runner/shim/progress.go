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

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
