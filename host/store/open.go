package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Open opens the store file at path, creating it (mode 0600, and its
// directory, mode 0700) if it does not exist. It waits up to
// opts.LockTimeout for another process holding the file, then fails with an
// error wrapping ErrLocked that names that process. A file that is damaged
// or not a bbolt file is refused with an error wrapping ErrCorrupt and left
// untouched; Open never replaces it with an empty store. A file whose mode
// does not let its owner write it is refused with an error wrapping
// ErrReadOnly (OpenReadOnly reads it). An empty (0 byte) file is damaged:
// flowgate never leaves one. Invalid opts fail with Validate's error.
func Open(path string, opts Options) (*Bolt, error) {
	return open(path, opts, nil)
}

// open is Open with a hook that adjusts the bbolt options, for tests.
func open(path string, opts Options, tune func(*bbolt.Options)) (*Bolt, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	if path == "" {
		return nil, errors.New("store: Open needs the path of the store file")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: resolve %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: create the directory of %s: %w", path, err)
	}
	start := time.Now()
	deadline := start.Add(opts.LockTimeout)
	// A writer reads every page first, unless the file is sealed (see
	// seal.go): writing over a damaged page spreads the damage, and a
	// damaged leaf misleads the engine.
	verified, wasSealed, err := verify(path, opts.LockTimeout, walkAll)
	if err != nil {
		return nil, err
	}
	if err := writable(path); err != nil {
		return nil, err
	}

	// NoSync and NoGrowSync stay false: every commit is on disk when
	// Update returns.
	bopts := &bbolt.Options{
		// What verify left of the wait; bbolt takes zero as "forever".
		Timeout:         max(time.Until(deadline), time.Millisecond),
		FreelistType:    bbolt.FreelistMapType,
		InitialMmapSize: opts.InitialMmapSize,
	}
	if tune != nil {
		tune(bopts)
	}
	if err := create(path); err != nil {
		return nil, err
	}
	pre, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, err)
	}
	var db *bbolt.DB
	if err := guard(path, func() error {
		db, err = bbolt.Open(path, 0o600, bopts)
		return err
	}); err != nil {
		return nil, openError(path, err)
	}
	// Compact renames a new file over the path while it holds the lock on
	// the old one. A process that was waiting for that lock then holds a
	// file no longer at the path: open again, and get the new one.
	if replaced(pre, path) {
		db.Close()
		if time.Now().After(deadline) {
			return nil, &lockedError{path: path, holder: readHolder(path)}
		}
		opts.LockTimeout = max(time.Until(deadline), time.Millisecond)
		return open(path, opts, tune)
	}
	if err := guard(path, func() error { return prepare(db) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: prepare: %w", path, err)
	}
	if err := writeHolder(path, holder{PID: os.Getpid(), Owner: opts.Owner, Since: time.Now()}); err != nil {
		opts.Logger.Warn("cannot write the holder file; a process that finds the store locked will not be able to name this one",
			"path", holderPath(path), "error", err)
	}
	opts.Logger.Info("opened store", "path", path, "took", time.Since(start), "sealed", wasSealed)

	// An existing store's prepare commits nothing, so its file is still
	// the one verify read when the sealer compares the two.
	b := &Bolt{
		path:   path,
		db:     db,
		logger: opts.Logger,
		commit: opts.OnCommit,
		seal:   newSealer(path, verified, opts.Logger),
		done:   make(chan struct{}),
	}
	b.group = newGroup(db, path, opts.MaxBatch, b.seal)
	b.drained = sync.NewCond(&b.mu)
	b.seal.touch() // seal the file as this open found it
	return b, nil
}

// prepare makes the kv bucket of a new store. A store that has it is left
// as it is: a commit would cost two syncs at every open.
func prepare(db *bbolt.DB) error {
	var found bool
	if err := db.View(func(tx *bbolt.Tx) error {
		found = tx.Bucket([]byte(bucketName)) != nil
		return nil
	}); err != nil || found {
		return err
	}
	return update(db, func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte(bucketName))
		return err
	})
}

// writable refuses an existing store file whose mode does not let its
// owner write it, with an error wrapping ErrReadOnly. Someone made it
// read-only on purpose, and the mode bits are checked here rather than
// left to the kernel, which lets root write any file.
func writable(path string) error {
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm()&0o200 != 0 {
		return nil // a missing file is created; other errors surface at open
	}
	return &readOnlyFileError{path: path, mode: info.Mode().Perm()}
}

// verify checks an existing store file before it is opened: bbolt must
// accept its meta pages, the file must hold every page they count, and its
// trees must be sound as far as a pageWalk to depth reads them, unless a
// seal vouches for them (see seal.go). It returns the stamp of the file it
// verified (zero when there was none or it could not be taken) and
// whether the seal spared the walk.
// bbolt maps a truncated file without complaint and then dies of SIGBUS on
// the first page past the end, and follows a damaged tree into a loop;
// verify turns both into an error wrapping ErrCorrupt, as it does an empty
// file (flowgate never leaves one: see create). It opens the file
// read-only, under a shared lock, so it waits for a writer like Open does
// and changes nothing.
func verify(path string, timeout time.Duration, depth walkDepth) (stamp, bool, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return stamp{}, false, nil
	case err != nil:
		return stamp{}, false, fmt.Errorf("store: %w", err)
	case !info.Mode().IsRegular():
		return stamp{}, false, &corruptError{path: path, cause: fmt.Errorf("not a regular file (%s)", info.Mode().Type())}
	case info.Size() == 0:
		return stamp{}, false, &corruptError{path: path, cause: errors.New("empty (0 bytes): a store file is never empty, so it was cut short or overwritten")}
	}
	var db *bbolt.DB
	if err := guard(path, func() error {
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: timeout})
		return err
	}); err != nil {
		return stamp{}, false, openError(path, err)
	}
	defer db.Close()
	// Under the lock, no writer changes the file while it is stamped and
	// walked.
	st, wasSealed := stampPath(path)
	if wasSealed {
		depth = walkMeta
	}
	w, err := walkFile(path, depth, nil)
	if err != nil {
		return stamp{}, false, err
	}
	if len(w.problems) > 0 {
		return stamp{}, false, &corruptError{path: path, cause: fmt.Errorf("damaged: %s", w.problems[0])}
	}
	return st, wasSealed, nil
}

// stampPath returns the stamp of the store file at path (zero when it
// cannot be taken) and whether the seal beside it describes it.
func stampPath(path string) (stamp, bool) {
	f, err := os.Open(path)
	if err != nil {
		return stamp{}, false
	}
	defer f.Close()
	st, ok := stampFile(f)
	if !ok {
		return stamp{}, false
	}
	return st, sealed(path, st)
}

// create makes a new, empty store at path when there is no file there.
// bbolt initialises a temporary file beside it, which is then linked into
// place, so no process ever finds a store file that is not whole; a
// process that creates one meanwhile wins, and its file is kept.
func create(path string) error {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // there is a file, or Open's next step reports why not
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	db, err := bbolt.Open(tmp.Name(), 0o600, &bbolt.Options{})
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// openError classifies an error from bbolt.Open: a lock timeout becomes
// ErrLocked naming the holder, an operating-system error stays as it is, and
// anything else means bbolt cannot read the file: ErrCorrupt.
func openError(path string, err error) error {
	var pathErr *fs.PathError
	var errno syscall.Errno
	switch {
	case errors.Is(err, ErrCorrupt):
		return err
	case errors.Is(err, berrors.ErrTimeout):
		return &lockedError{path: path, holder: readHolder(path)}
	case errors.As(err, &pathErr), errors.As(err, &errno):
		return fmt.Errorf("store: open %s: %w", path, err)
	}
	return &corruptError{path: path, cause: err}
}
