package store

import (
	"fmt"
	"os"

	"go.etcd.io/bbolt"
)

// MaxPageProblems caps the problems PageProblems and CheckFile return: a
// badly damaged file yields one per page, and the first ones say enough.
const MaxPageProblems = 100

// PageProblems runs bbolt's page-level consistency check over the whole
// file and returns every problem it finds (at most MaxPageProblems) as
// text; none for a sound file. It returns ErrClosed after Close.
//
// It runs in a write transaction that it rolls back: bbolt's check reads
// the free-page list, which a concurrent commit changes under a read
// transaction, and reports sound pages as damaged when that happens
// (Check, in a read transaction, is only right with no writer about).
// Writers therefore wait while it runs, for time in proportion to the
// file size; readers carry on.
func (b *Bolt) PageProblems() ([]string, error) {
	if err := b.acquire(); err != nil {
		return nil, err
	}
	defer b.release()
	tx, err := b.db.Begin(true)
	if err != nil {
		return nil, fmt.Errorf("store %s: page check: %w", b.path, err)
	}
	defer tx.Rollback()
	return pageProblems(b.path, tx)
}

// PageProblems is Bolt.PageProblems on a read-only file.
func (r *ReadOnly) PageProblems() ([]string, error) {
	var out []string
	err := r.view(func(tx *bbolt.Tx) (err error) {
		out, err = pageProblems(r.path, tx)
		return err
	})
	return out, r.closedAs(err)
}

// pageProblems checks the file at path, of which tx is the latest
// transaction and no writer is about: first pageWalk reads every page of
// the trees, bounded, and reports what would make bbolt loop, run out of
// memory or read outside its map; only a file that passes goes on to
// tx.Check, whose problems it drains, keeping the first MaxPageProblems.
func pageProblems(path string, tx *bbolt.Tx) ([]string, error) {
	w, err := walkFile(path, walkAll, nil)
	if err != nil || len(w.problems) > 0 {
		return w.problemsOrNil(), err
	}
	var out []string
	for err := range tx.Check() { // drain: Check's goroutine sends them all
		if len(out) < MaxPageProblems {
			out = append(out, err.Error())
		}
	}
	return out, nil
}

// FileReport describes a store file as CheckFile found it.
type FileReport struct {
	// Path is the file's absolute path.
	Path string
	// Size is the file's length in bytes.
	Size int64
	// Revision is the id of the last transaction committed to the file
	// (bbolt's transaction id). It grows with every commit, so two copies
	// of one store compare by it.
	Revision int64
	// Keys counts the keys by their first path segment ("flow", "task",
	// "idx", ...); a key without a '/' counts under itself. Nil when
	// Problems is not empty: a damaged file is not walked.
	Keys map[string]int
	// Problems is what bbolt's page check found (at most
	// MaxPageProblems); empty for a sound file.
	Problems []string
}

// CheckFile opens the store file at path with OpenForCheck (a file
// damaged past opening fails with an error wrapping ErrCorrupt), runs bbolt's page check over it and, when that finds
// nothing, counts its keys. Page damage is reported in Problems, not as an
// error.
func CheckFile(path string, opts Options) (FileReport, error) {
	r, err := OpenForCheck(path, opts)
	if err != nil {
		return FileReport{}, err
	}
	defer r.Close()
	info, err := os.Stat(r.path)
	if err != nil {
		return FileReport{}, fmt.Errorf("store: %w", err)
	}
	rep := FileReport{Path: r.path, Size: info.Size()}
	err = r.view(func(tx *bbolt.Tx) error {
		rep.Revision = int64(tx.ID())
		if rep.Problems, err = pageProblems(r.path, tx); err != nil || len(rep.Problems) > 0 {
			return err
		}
		rep.Keys = map[string]int{}
		return tx.Bucket([]byte(bucketName)).ForEach(func(k, _ []byte) error {
			rep.Keys[keyKind(string(k))]++
			return nil
		})
	})
	return rep, err
}
