package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// bucketName is the one bbolt bucket that holds every key.
const bucketName = "kv"

// revisionSize is the length of the big-endian revision that precedes the
// data in every stored value.
const revisionSize = 8

// readTx implements ReadTx on a bbolt bucket.
type readTx struct {
	bucket *bbolt.Bucket
	// writable makes Scan re-seek after each callback, because a callback
	// that writes invalidates a bbolt cursor.
	writable bool
}

// Get implements ReadTx.
func (t readTx) Get(key string) (Item, error) {
	if key == "" {
		return Item{}, ErrEmptyKey
	}
	v := t.bucket.Get([]byte(key))
	if v == nil {
		return Item{}, ErrKeyNotFound
	}
	return decode(key, v)
}

// writeTx implements Tx on a bbolt bucket in a read-write transaction.
type writeTx struct {
	readTx
	// wrote is set by the first change, so that a transaction that changed
	// nothing is rolled back instead of paying for a commit.
	wrote *bool
}

// Put implements Tx.
func (t writeTx) Put(key string, value []byte) (int64, error) {
	if key == "" {
		return 0, ErrEmptyKey
	}
	if len(value) > MaxValueSize {
		return 0, fmt.Errorf("%w: key %q, %d bytes", ErrValueTooLarge, key, len(value))
	}
	k := []byte(key)
	rev := int64(1)
	if old := t.bucket.Get(k); old != nil {
		prev, err := revisionOf(key, old)
		if err != nil {
			return 0, err
		}
		rev = prev + 1
	}
	// A fresh buffer: bbolt keeps a reference to it until the commit.
	buf := make([]byte, revisionSize+len(value))
	binary.BigEndian.PutUint64(buf, uint64(rev))
	copy(buf[revisionSize:], value)
	if err := t.bucket.Put(k, buf); err != nil {
		if errors.Is(err, berrors.ErrKeyTooLarge) {
			return 0, fmt.Errorf("store: key is too long (%d bytes, at most %d): %w", len(key), bbolt.MaxKeySize, err)
		}
		return 0, fmt.Errorf("store: put %q: %w", key, err)
	}
	*t.wrote = true
	return rev, nil
}

// Delete implements Tx.
func (t writeTx) Delete(key string) error {
	if key == "" {
		return ErrEmptyKey
	}
	k := []byte(key)
	if t.bucket.Get(k) == nil {
		return nil
	}
	if err := t.bucket.Delete(k); err != nil {
		return fmt.Errorf("store: delete %q: %w", key, err)
	}
	*t.wrote = true
	return nil
}

// decode turns a stored value into an Item with a copy of the data, so the
// item stays valid after the transaction. A value longer than any Put
// writes is damage (a length bbolt read from a damaged page), refused
// before it is copied: copying it could take gigabytes.
func decode(key string, v []byte) (Item, error) {
	rev, err := revisionOf(key, v)
	if err != nil {
		return Item{}, err
	}
	if len(v) > revisionSize+MaxValueSize {
		return Item{}, fmt.Errorf("%w: record %q has %d bytes, more than flowgate ever writes (%d); its page is damaged: run flowgate check",
			ErrCorrupt, key, len(v), revisionSize+MaxValueSize)
	}
	return Item{Key: key, Value: bytes.Clone(v[revisionSize:]), Revision: rev}, nil
}

// revisionOf reads the revision header of the stored value v of key.
func revisionOf(key string, v []byte) (int64, error) {
	if len(v) < revisionSize {
		return 0, fmt.Errorf("%w: record %q has %d bytes, fewer than its %d-byte revision header; restore the store from a backup",
			ErrCorrupt, key, len(v), revisionSize)
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}
