package store

import (
	"maps"
	"slices"
)

// Buffer is a Tx whose writes stay in memory over a read transaction:
// reads see the buffered writes over base, as a transaction sees its own
// writes, and nothing reaches base. A backend that commits elsewhere (etcd
// sends the writes in one request at the end) runs the caller's function
// against a Buffer and then commits Writes. Put numbers a key's revision
// from what base shows, so base must be the snapshot the commit is
// checked against. Make one with NewBuffer; it is not safe for concurrent
// use.
type Buffer struct {
	overlayTx
}

var _ Tx = (*Buffer)(nil)

// NewBuffer returns an empty Buffer over base.
func NewBuffer(base ReadTx) *Buffer {
	return &Buffer{overlayTx{base: base, pending: map[string]*Item{}}}
}

// Write is one buffered change: a Put of Value at Revision, or a Delete.
type Write struct {
	Key      string
	Value    []byte
	Revision int64 // the revision the Put gives the key; 0 for a Delete
	Delete   bool
}

// Writes returns the buffered changes in key order, the last one per key.
func (b *Buffer) Writes() []Write {
	out := make([]Write, 0, len(b.pending))
	for _, k := range slices.Sorted(maps.Keys(b.pending)) {
		it := b.pending[k]
		if it == nil {
			out = append(out, Write{Key: k, Delete: true})
			continue
		}
		out = append(out, Write{Key: k, Value: it.Value, Revision: it.Revision})
	}
	return out
}
