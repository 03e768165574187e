package store

import (
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/bbolt"
)

// Space is how a store file's bytes are used.
type Space struct {
	// FileBytes is the file's size; FreeBytes is what its free pages
	// (free, and pending release by open read transactions) take of it.
	FileBytes int64 `json:"file_bytes"`
	FreeBytes int64 `json:"free_bytes"`
}

// FreeShare is FreeBytes as a share of FileBytes, from 0 to 1.
func (s Space) FreeShare() float64 {
	if s.FileBytes <= 0 {
		return 0
	}
	return float64(s.FreeBytes) / float64(s.FileBytes)
}

// Space reports the file's size and the bytes in its free pages. bbolt
// never gives space back to the file system; Compact does.
func (b *Bolt) Space() (Space, error) {
	if err := b.acquire(); err != nil {
		return Space{}, err
	}
	defer b.release()
	fi, err := os.Stat(b.path)
	if err != nil {
		return Space{}, fmt.Errorf("store: %w", err)
	}
	st := b.db.Stats()
	page := int64(b.db.Info().PageSize)
	return Space{FileBytes: fi.Size(), FreeBytes: int64(st.FreePageN+st.PendingPageN) * page}, nil
}

// compactTxMax bounds how many bytes Compact copies per transaction.
const compactTxMax = 64 << 20

// Compact rewrites the store file at path without its free pages and
// returns its size before and after. It holds the store's lock for the
// whole rewrite (waiting opts.LockTimeout for another holder, and failing
// with ErrLocked naming it, as Open does): it copies every key into a new
// file beside path, syncs it, page-checks it, and renames it over path
// before it lets go, so the file at path is always a whole store, the old
// or the new. A process that was waiting for the lock then opens the new
// file (Open checks that the file it locked is still the one at path).
func Compact(path string, opts Options) (before, after int64, err error) {
	src, err := Open(path, opts)
	if err != nil {
		return 0, 0, err
	}
	defer src.Close()
	if err := src.acquire(); err != nil {
		return 0, 0, err
	}
	defer src.release()
	fi, err := os.Stat(src.path)
	if err != nil {
		return 0, 0, fmt.Errorf("store: %w", err)
	}
	before = fi.Size()

	tmp := src.path + ".compact"
	_ = os.Remove(tmp) // left by a compaction that died: never the store
	dst, err := bbolt.Open(tmp, 0o600, &bbolt.Options{FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return before, 0, fmt.Errorf("store: compact %s: %w", src.path, err)
	}
	fail := func(err error) (int64, int64, error) {
		dst.Close() // a no-op once closed
		os.Remove(tmp)
		return before, 0, fmt.Errorf("store: compact %s: %w; the store is unchanged", src.path, err)
	}
	if err := guard(src.path, func() error { return bbolt.Compact(dst, src.db, compactTxMax) }); err != nil {
		return fail(err)
	}
	if err := dst.Sync(); err != nil {
		return fail(err)
	}
	var problems []string
	if err := dst.View(func(tx *bbolt.Tx) (err error) { problems, err = pageProblems(tmp, tx); return err }); err != nil {
		return fail(err)
	}
	if len(problems) > 0 {
		return fail(fmt.Errorf("the compacted copy fails its page check: %s", problems[0]))
	}
	if err := dst.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, src.path); err != nil {
		return fail(err)
	}
	if err := syncDir(filepath.Dir(src.path)); err != nil {
		return before, 0, fmt.Errorf("store: compact %s: the compacted file is in place, but its directory did not sync: %w", src.path, err)
	}
	if fi, err = os.Stat(src.path); err == nil {
		after = fi.Size()
	}
	return before, after, nil
}

// replaced reports whether the file at path changed between before (a
// stat taken before bbolt opened it; nil if there was none) and now: then
// bbolt may hold a file that Compact renamed a new one over while this
// process waited for its lock. A false alarm costs one more open.
func replaced(before os.FileInfo, path string) bool {
	cur, err := os.Stat(path)
	return before == nil || err != nil || !os.SameFile(before, cur)
}
