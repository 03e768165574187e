package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrWriteFailed is wrapped by every error of a commit that could not
// reach the disk (a full disk, an I/O error), as opposed to an error of
// the caller's own function. Nothing of the failed transaction is stored,
// and the store stays usable: the next commit tries again, so writes
// resume by themselves once the cause is gone. Loops that write should back
// off while they meet it.
var ErrWriteFailed = errors.New("store: write failed")

// DiskFull reports whether err says the disk is full (ENOSPC). bbolt keeps
// the cause of a failed page write wrappable, but turns a failed file
// resize into text, so the text is checked too.
func DiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || (err != nil && strings.Contains(err.Error(), syscall.ENOSPC.Error()))
}

// WriteHealth says whether the store's last commit reached the disk. The
// zero value means no commit has been tried yet, which counts as
// writable.
type WriteHealth struct {
	// Writable is false from a failed commit until the next one succeeds.
	Writable bool `json:"writable"`
	// DiskFull is set when the last commit failed because the disk is
	// full.
	DiskFull bool `json:"disk_full,omitempty"`
	// LastError is the error of the last failed commit, kept after writes
	// resume.
	LastError string `json:"last_error,omitempty"`
	// LastErrorAt is when a commit last failed; zero if none has.
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// LastWriteAt is when a commit last succeeded; zero if none has since
	// the store was opened.
	LastWriteAt time.Time `json:"last_write_at,omitzero"`
	// Failures counts the commits that failed since the last one that
	// succeeded.
	Failures int64 `json:"failures,omitempty"`
	// Attempts counts the commits tried since the store was opened (failed
	// or not): how hard writers press on the disk.
	Attempts int64 `json:"attempts"`
}

// Problem is the one-line reason that what (the store, task files) cannot
// be written ("store not writable: disk full; …"), or "" when it can.
func (h WriteHealth) Problem(what string) string {
	switch {
	case h.Writable:
		return ""
	case h.DiskFull:
		return what + " not writable: disk full; free space on its disk and writes resume by themselves"
	default:
		return what + " not writable: " + h.LastError + "; writes resume by themselves once the cause is fixed"
	}
}

// Health tracks the outcome of writes, for a WriteHealth: the store's
// commits, or a component's own files. The zero value is not usable; use
// NewHealth. It is safe for concurrent use.
type Health struct {
	now func() time.Time

	mu sync.Mutex
	h  WriteHealth
}

// NewHealth returns a tracker that counts as writable until a write fails.
func NewHealth() *Health {
	return &Health{now: time.Now, h: WriteHealth{Writable: true}}
}

// Record notes the outcome of one write (err is nil when it succeeded).
func (t *Health) Record(err error) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.h.Attempts++
	if err == nil {
		t.h.Writable, t.h.DiskFull, t.h.Failures, t.h.LastWriteAt = true, false, 0, now
		return
	}
	t.h.Writable, t.h.DiskFull, t.h.LastError, t.h.LastErrorAt = false, DiskFull(err), err.Error(), now
	t.h.Failures++
}

// Get returns the state so far.
func (t *Health) Get() WriteHealth {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.h
}

// writeError is a failed commit: ErrWriteFailed and its cause.
type writeError struct {
	path  string
	cause error
}

func (e *writeError) Error() string {
	if DiskFull(e.cause) {
		return fmt.Sprintf("store %s: commit failed, disk full (%v): free space on its disk; nothing of this write was stored, and writes resume by themselves", e.path, e.cause)
	}
	return fmt.Sprintf("store %s: commit failed: %v", e.path, e.cause)
}

func (e *writeError) Unwrap() []error { return []error{ErrWriteFailed, e.cause} }

// WriteHealth says whether the last commit reached the disk, when one last
// did, and the last commit error (see WriteHealth). It works after Close,
// reporting the state the store was closed in.
func (b *Bolt) WriteHealth() WriteHealth { return b.group.health.Get() }
