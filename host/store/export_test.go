package store

import (
	"encoding/binary"
	"os"
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

// OpenPaused is Open that calls pause once, after its checks and just
// before bbolt opens the file, so a test can act in that window.
func OpenPaused(path string, opts Options, pause func()) (*Bolt, error) {
	var once sync.Once
	return open(path, opts, func(*bbolt.Options) { once.Do(pause) })
}

// Guard is guard, for tests.
var Guard = guard

// KVRoot returns the page id of the kv bucket's root in the file at path.
func KVRoot(path string) (uint64, error) {
	var root uint64
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	meta, err := readMeta(f)
	if err != nil {
		return 0, err
	}
	w := &pageWalk{f: f, meta: meta, depth: walkAll, seen: map[uint64]bool{}}
	p := w.page(meta.root, leafPageFlag, "", true)
	for _, e := range w.decode(meta.root, p) {
		root = binary.LittleEndian.Uint64(e.value)
	}
	return root, nil
}

// PageSize returns the page size in the meta of the file at path.
func PageSize(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	meta, err := readMeta(f)
	return int(meta.pageSize), err
}

// KeyKindOf is keyKind, for tests.
var KeyKindOf = keyKind

// FreelistPage returns the page id of the free list in the meta of the
// file at path.
func FreelistPage(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	meta, err := readMeta(f)
	return meta.freelist, err
}

// Sealed reports whether the seal beside the store file at path
// describes it, so that an open would skip the walk of its pages.
func Sealed(path string) bool {
	_, ok := stampPath(path)
	return ok
}

// SealSuffix is what the seal's file name adds to the store's.
const SealSuffix = sealSuffix
