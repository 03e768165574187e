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
// ErrReadOnly (OpenReadOnly reads it). An empty (0 byte) file is
// initialised. Invalid opts fail with Validate's error.
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
	if err := verify(path, opts.LockTimeout); err != nil {
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
	pre, err := statCreate(path)
	if err != nil {
		return nil, openError(path, err)
	}
	db, err := bbolt.Open(path, 0o600, bopts)
	if err != nil {
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
	if err := update(db, func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte(bucketName))
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: prepare: %w", path, err)
	}
	if err := writeHolder(path, holder{PID: os.Getpid(), Owner: opts.Owner, Since: time.Now()}); err != nil {
		opts.Logger.Warn("cannot write the holder file; a process that finds the store locked will not be able to name this one",
			"path", holderPath(path), "error", err)
	}
	opts.Logger.Info("opened store", "path", path, "took", time.Since(start))

	b := &Bolt{
		path:   path,
		db:     db,
		group:  newGroup(db, path, opts.MaxBatch),
		logger: opts.Logger,
		commit: opts.OnCommit,
		done:   make(chan struct{}),
	}
	b.drained = sync.NewCond(&b.mu)
	return b, nil
}

// statCreate creates the file at path if it does not exist (bbolt
// initialises an empty file) and returns what it found there, for
// replaced. Creating it here gives a new store a stat to compare against,
// so it is not opened a second time.
func statCreate(path string) (os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
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

// verify checks an existing, non-empty store file before it is opened for
// writing: bbolt must accept its meta pages, and the file must hold every
// page they count. bbolt maps a truncated file without complaint and then
// dies of SIGBUS on the first page past the end; verify turns that into an
// error wrapping ErrCorrupt. It opens the file read-only, under a shared
// lock, so it waits for a writer like Open does and changes nothing.
func verify(path string, timeout time.Duration) error {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("store: %w", err)
	case !info.Mode().IsRegular():
		return &corruptError{path: path, cause: fmt.Errorf("not a regular file (%s)", info.Mode().Type())}
	case info.Size() == 0:
		return nil
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return openError(path, err)
	}
	defer db.Close()
	// Stat again under the lock: a writer may have grown the file since.
	if info, err = os.Stat(path); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	var need int64
	if err := db.View(func(tx *bbolt.Tx) error {
		need = tx.Size()
		return nil
	}); err != nil {
		return openError(path, err)
	}
	if need > info.Size() {
		return &corruptError{path: path, cause: fmt.Errorf("truncated: %d bytes, its pages need %d", info.Size(), need)}
	}
	return nil
}

// openError classifies an error from bbolt.Open: a lock timeout becomes
// ErrLocked naming the holder, an operating-system error stays as it is, and
// anything else means bbolt cannot read the file: ErrCorrupt.
func openError(path string, err error) error {
	var pathErr *fs.PathError
	var errno syscall.Errno
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return &lockedError{path: path, holder: readHolder(path)}
	case errors.As(err, &pathErr), errors.As(err, &errno):
		return fmt.Errorf("store: open %s: %w", path, err)
	}
	return &corruptError{path: path, cause: err}
}
