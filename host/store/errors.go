package store

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

var (
	// ErrLocked is returned by Open when another process holds the store
	// file for longer than Options.LockTimeout. The error wrapping it names
	// that process when the holder file next to the store says who it is.
	ErrLocked = errors.New("store: in use by another process")
	// ErrCorrupt is returned by Open for a file that is damaged or is not a
	// flowgate store, and by reads that meet a damaged record. Open never
	// replaces such a file: restore it from a backup or move it aside.
	ErrCorrupt = errors.New("store: damaged or not a flowgate store")
)

// lockedError says which process holds the store file.
type lockedError struct {
	path   string
	holder *holder // nil when the holder file is missing or unreadable
}

func (e *lockedError) Error() string {
	if e.holder == nil {
		return fmt.Sprintf("store %s is in use by another process (it left no holder record): stop it or wait for it to finish, then retry", e.path)
	}
	return fmt.Sprintf("store %s is in use by pid %d (%s, since %s): stop it or wait for it to finish, then retry",
		e.path, e.holder.PID, e.holder.Owner, e.holder.Since.Format(time.RFC3339))
}

func (e *lockedError) Unwrap() error { return ErrLocked }

// corruptError says which file cannot be read, why, and what to do.
type corruptError struct {
	path  string
	cause error
	// panicked is true when bbolt panicked or faulted on the file (see
	// guard): its pages, not one record, are damaged.
	panicked bool
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("store %s cannot be read (%v): the file is damaged or is not a flowgate store; "+
		"restore it from a backup, or move it aside to start with an empty store (flowgate never replaces it on its own); "+
		"'flowgate check' shows the damage and 'flowgate check --salvage NEW.db' copies every record that can still be read",
		e.path, e.cause)
}

func (e *corruptError) Unwrap() []error { return []error{ErrCorrupt, e.cause} }

// readOnlyFileError says that a store file's mode forbids writing it, and
// what to do.
type readOnlyFileError struct {
	path string
	mode fs.FileMode
}

func (e *readOnlyFileError) Error() string {
	return fmt.Sprintf("store %s is read-only (mode %04o) and this command changes records: make it writable (chmod u+w %s) to run it, or use a command that only reads",
		e.path, e.mode, e.path)
}

func (e *readOnlyFileError) Unwrap() error { return ErrReadOnly }
