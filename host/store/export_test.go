package store

import (
	"sync"

	"go.etcd.io/bbolt"
)

// Test hooks: compiled into this package's tests only.

// BucketName is the bbolt bucket that holds every key.
const BucketName = bucketName

// OpenMaxSize opens a store whose file may not grow past maxSize bytes, so
// that tests can make a commit fail the way a full disk does.
func OpenMaxSize(path string, opts Options, maxSize int) (*Bolt, error) {
	return open(path, opts, func(o *bbolt.Options) { o.MaxSize = maxSize })
}

// Queued returns how many Update calls wait behind the commit in flight.
func Queued(b *Bolt) int {
	b.group.mu.Lock()
	defer b.group.mu.Unlock()
	return len(b.group.pending)
}

// CommitStats returns how many transactions were committed and how many
// Update calls they carried.
func CommitStats(b *Bolt) (commits, calls int64) {
	return b.group.stats()
}

// OpenPaused is Open that calls pause once, after its checks and just
// before bbolt opens the file, so a test can act in that window.
func OpenPaused(path string, opts Options, pause func()) (*Bolt, error) {
	var once sync.Once
	return open(path, opts, func(*bbolt.Options) { once.Do(pause) })
}
