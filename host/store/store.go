package store

import (
	"context"
	"errors"
)

// Item is one key with its value and revision, as read inside a transaction.
type Item struct {
	// Key is the full key, including any prefix.
	Key string
	// Value is the stored bytes. It is a copy: it stays valid after the
	// transaction ends and the caller may keep or modify it.
	Value []byte
	// Revision counts the writes to this key since it was created: 1 after
	// the first Put, +1 on every later Put. A deleted and re-created key
	// starts again at 1 (etcd's Version has the same rule). The engine
	// takes it as a flow's revision, so every backend must keep these
	// rules exactly (storetest checks them).
	Revision int64
}

// ScanOptions narrows a Scan. The zero value scans every key under the
// prefix in ascending key order.
type ScanOptions struct {
	// After, if not empty, starts the scan strictly after this key (strictly
	// before it when Reverse is set). It is how callers page with a cursor.
	After string
	// Reverse walks the keys in descending order.
	Reverse bool
	// Limit stops the scan after this many items. Zero means no limit.
	Limit int
}

// ReadTx reads a consistent snapshot of the store. Its reads are bounded
// by the context of the View or Update that made it: a network backend
// stops reading when that context ends and returns its error.
type ReadTx interface {
	// Get returns the item at key, or ErrKeyNotFound.
	Get(key string) (Item, error)
	// Scan calls fn for each item whose key starts with prefix, in key order
	// (see ScanOptions). Returning false from fn stops the scan early.
	Scan(prefix string, opts ScanOptions, fn func(Item) bool) error
}

// Tx reads and writes atomically: every Put and Delete made inside one
// Update commits together or not at all.
type Tx interface {
	ReadTx
	// Put stores value at key and returns the key's new revision. A value
	// larger than MaxValueSize is refused with ErrValueTooLarge.
	Put(key string, value []byte) (int64, error)
	// Delete removes key. Deleting a missing key is not an error.
	Delete(key string) error
}

// Store is a transactional key-value store with a revision per key. It is
// safe for concurrent use. Keys are non-empty strings; values are opaque
// bytes.
type Store interface {
	// View runs fn in a read-only transaction. Keep fn short: copy what you
	// need and return; never wait on I/O, RPCs or channels inside it.
	// The transaction's reads are bounded by ctx: once it ends, View
	// returns an error that wraps ctx's (context.Canceled or
	// context.DeadlineExceeded). A backend on a local file checks ctx
	// before it begins; a network backend also on every round trip.
	View(ctx context.Context, fn func(ReadTx) error) error
	// Update runs fn in a read-write transaction and commits durably (the
	// write is on disk when Update returns nil). If fn returns an error the
	// transaction is rolled back and that error is returned.
	//
	// Concurrent Updates may be committed together in one transaction
	// (group commit). fn may therefore run more than once, and must be
	// idempotent: reset anything it captures at its start, and report a
	// refusal (such as a revision conflict) through a captured variable
	// while returning nil, so that the other writers in the group are not
	// rolled back with it.
	//
	// ctx bounds the call as for View. A network backend that sent its
	// commit when ctx ended cannot know whether it applied: the error then
	// wraps both ctx's error and ErrWriteFailed.
	Update(ctx context.Context, fn func(Tx) error) error
	// Close releases the store. Calls after Close fail with ErrClosed.
	Close() error
}

// MaxValueSize bounds one value. Records are small; logs, outputs and other
// bulky data belong in files next to the store, not in it.
const MaxValueSize = 1 << 20

var (
	// ErrKeyNotFound is returned by Get for a key that does not exist.
	ErrKeyNotFound = errors.New("store: key not found")
	// ErrValueTooLarge is returned by Put for a value over MaxValueSize.
	ErrValueTooLarge = errors.New("store: value too large (over 1 MiB); keep bulky data in files")
	// ErrClosed is returned by calls on a closed store.
	ErrClosed = errors.New("store: closed")
	// ErrEmptyKey is returned for an empty key.
	ErrEmptyKey = errors.New("store: empty key")
)

// ErrTxnTooLarge is returned by Update on a backend that bounds one
// transaction (etcd: operations and request bytes) for a change over the
// bound. Nothing of the change is written. The error wrapping it says
// which bound and by how much.
var ErrTxnTooLarge = errors.New("store: transaction too large for the backend")
