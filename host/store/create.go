package store

import (
	"errors"
	"fmt"
)

// ErrKeyExists is returned by Create for a key that exists.
var ErrKeyExists = errors.New("store: key exists")

// Creator is a Tx that puts a new key without reading it first where a
// read costs a round trip (see Create).
type Creator interface {
	// Create puts value at key, which must not exist, and fails with an
	// error wrapping ErrKeyExists when the transaction sees it.
	Create(key string, value []byte) error
}

// AbsenceAssumer is a ReadTx that can take a key's absence on trust and
// check it when the transaction commits. etcd's reader is one: its
// commit's compares then include that the key is still absent, so a
// wrong guess fails the commit and the function runs again, knowing the
// key this time. A Buffer or Overlay over one creates keys this way.
type AbsenceAssumer interface {
	// AssumeAbsent reports whether key exists as far as the transaction
	// knows without asking the backend, taking a key it knows nothing of
	// to be absent.
	AssumeAbsent(key string) (exists bool, err error)
}

// Create puts value at key in tx, for a key the caller expects not to
// exist (a new entry of a numbered log), and fails with an error wrapping
// ErrKeyExists, writing nothing, when it does exist. On etcd it costs no
// read: the commit checks that the key is still absent (see
// AbsenceAssumer). Elsewhere it reads the key and then puts it.
func Create(tx Tx, key string, value []byte) error {
	if c, ok := tx.(Creator); ok {
		return c.Create(key, value)
	}
	return createOver(tx, tx, key, value)
}

// createOver puts value at key through tx, after looking key up in base (a
// ReadTx that may take its absence on trust).
func createOver(tx Tx, base ReadTx, key string, value []byte) error {
	var (
		exists bool
		err    error
	)
	if a, ok := base.(AbsenceAssumer); ok {
		exists, err = a.AssumeAbsent(key)
	} else {
		_, err = base.Get(key)
		exists = err == nil
		if errors.Is(err, ErrKeyNotFound) {
			err = nil
		}
	}
	switch {
	case err != nil:
		return err
	case exists:
		return fmt.Errorf("%w: %q", ErrKeyExists, key)
	}
	_, err = tx.Put(key, value)
	return err
}

// Create implements Creator: a key the transaction wrote or deleted is
// judged by that, any other by the base.
func (t overlayTx) Create(key string, value []byte) error {
	if key == "" {
		return ErrEmptyKey
	}
	if it, ok := t.lookup(key); ok {
		if it != nil {
			return fmt.Errorf("%w: %q", ErrKeyExists, key)
		}
		_, err := t.Put(key, value)
		return err
	}
	return createOver(t, t.base, key, value)
}
