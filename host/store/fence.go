package store

import (
	"context"
	"errors"
)

// ErrFenced is returned by a fenced write (Fencer.UpdateFenced) whose
// fence no longer holds: nothing of it was written.
var ErrFenced = errors.New("store: the fence no longer holds")

// Fence is a condition a write commits under, in the same transaction:
// the backend key Key (outside the store's records, such as an
// election's leader key) still exists with creation revision Revision.
// A process that held it and lost it (its lease ended, it resigned)
// cannot commit a write fenced on it, however late its request arrives.
type Fence struct {
	Key      string
	Revision int64
}

// Fencer is a Store that can fence a write. The etcd store is one; a
// bbolt store, served by one process, is not.
type Fencer interface {
	// UpdateFenced is Update, committed only while f holds; otherwise
	// nothing is written and the error wraps ErrFenced.
	UpdateFenced(ctx context.Context, f Fence, fn func(Tx) error) error
}
