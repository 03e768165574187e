package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrReadOnly is returned by Update on a store opened with OpenReadOnly or
// a sealed Overlay, and by Open for a file its owner may not write.
var ErrReadOnly = errors.New("store: opened read-only")

// ReadOnly is a store file opened for reading only: it is copied and
// checked without a byte of it changing, which matters for a file that may
// be damaged (a write there could spread the damage). It holds a shared
// lock, so a process that wants to write the file waits until Close. Open
// it with OpenReadOnly; the zero value is not usable. It is safe for
// concurrent use, and implements Store with an Update that always fails
// with ErrReadOnly.
type ReadOnly struct {
	path string
	db   *bbolt.DB
}

var _ Store = (*ReadOnly)(nil)

// OpenReadOnly opens the existing store file at path for reading. Like
// Open it waits up to opts.LockTimeout for a process writing the file
// (then fails with an error wrapping ErrLocked that names it), and refuses
// a damaged file, a truncated one and one that is not a flowgate store
// with an error wrapping ErrCorrupt. A missing file fails with an error
// wrapping fs.ErrNotExist: nothing is created. Of opts only LockTimeout is
// used; invalid opts fail with Validate's error.
func OpenReadOnly(path string, opts Options) (*ReadOnly, error) {
	return openReadOnly(path, opts, walkBranches)
}

// OpenForCheck is OpenReadOnly for a file that may be damaged, to check,
// copy or salvage it: it checks the meta pages but does not walk the
// trees, so that PageProblems can list every problem in them. Use only
// Path, PageProblems, WriteTo and Close on what it returns, and View only
// once PageProblems found nothing: bbolt follows a damaged tree into a
// loop.
func OpenForCheck(path string, opts Options) (*ReadOnly, error) {
	return openReadOnly(path, opts, walkMeta)
}

// openReadOnly opens path read-only, after verify to depth.
func openReadOnly(path string, opts Options, depth walkDepth) (*ReadOnly, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: resolve %s: %w", path, err)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if _, _, err := verify(path, opts.LockTimeout, depth); err != nil {
		return nil, err
	}
	var db *bbolt.DB
	if err := guard(path, func() error {
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: opts.LockTimeout})
		return err
	}); err != nil {
		return nil, openError(path, err)
	}
	r := &ReadOnly{path: path, db: db}
	if err := r.view(func(tx *bbolt.Tx) error {
		if tx.Bucket([]byte(bucketName)) == nil {
			return &corruptError{path: path, cause: fmt.Errorf("a bbolt file without the %q bucket", bucketName)}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

// Path returns the absolute path of the store file.
func (r *ReadOnly) Path() string { return r.path }

// View implements Store. It returns fn's error, or ErrClosed after Close;
// ctx is checked as Bolt.View checks it.
func (r *ReadOnly) View(ctx context.Context, fn func(ReadTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.closedAs(r.view(func(tx *bbolt.Tx) error {
		return fn(readTx{bucket: tx.Bucket([]byte(bucketName))})
	}))
}

// view runs fn in a read transaction, guarded (see guard).
func (r *ReadOnly) view(fn func(*bbolt.Tx) error) error {
	return guard(r.path, func() error { return r.db.View(fn) })
}

// Update implements Store: it returns ErrReadOnly and runs nothing.
func (r *ReadOnly) Update(context.Context, func(Tx) error) error {
	return fmt.Errorf("%w: %s cannot be changed through this handle", ErrReadOnly, r.path)
}

// WriteTo writes a consistent copy of the whole file to w, like
// Bolt.WriteTo. It returns the bytes written and the first error from w,
// or ErrClosed after Close.
func (r *ReadOnly) WriteTo(w io.Writer) (int64, error) {
	var n int64
	err := r.view(func(tx *bbolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, r.closedAs(err)
}

// Close releases the file and its lock. It is idempotent.
func (r *ReadOnly) Close() error {
	if err := r.db.Close(); err != nil {
		return fmt.Errorf("store %s: close: %w", r.path, err)
	}
	return nil
}

// closedAs turns bbolt's error for a closed database into ErrClosed.
func (r *ReadOnly) closedAs(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// Space is Bolt.Space on a read-only file. bbolt reads a read-only file's
// list of free pages only for a page check, so Space runs one, in time in
// proportion to the file size; a file the check finds damaged fails with
// an error wrapping ErrCorrupt.
func (r *ReadOnly) Space() (Space, error) {
	problems, err := r.PageProblems()
	if err != nil {
		return Space{}, err
	}
	if len(problems) > 0 {
		return Space{}, fmt.Errorf("%w: %s: %s", ErrCorrupt, r.path, problems[0])
	}
	fi, err := os.Stat(r.path)
	if err != nil {
		return Space{}, fmt.Errorf("store: %w", err)
	}
	page := int64(r.db.Info().PageSize)
	return Space{FileBytes: fi.Size(), FreeBytes: int64(r.db.Stats().FreePageN) * page}, nil
}
