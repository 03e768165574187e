package store

import "go.etcd.io/bbolt"

// The file grows in steps about as large as the data already in it,
// between these bounds. bbolt's own default, once the mapping is larger
// than its 16 MiB AllocSize (always, with a 1 GiB InitialMmapSize), is
// to add 16 MiB at every growth, so an empty store took 16 MiB on disk.
// Doubling from a small step keeps a new store small, and costs a store
// that reaches 16 MiB about ten more truncate-and-sync calls over its
// whole life; larger stores grow 16 MiB at a time, as before.
const (
	minGrowStep = 64 << 10
	maxGrowStep = 16 << 20
)

// growStep is the AllocSize for a file whose pages end at size bytes.
func growStep(size int64) int {
	return int(min(max(size, minGrowStep), maxGrowStep))
}

// update runs fn in a read-write transaction of db, with the file's
// growth step set for its current size first. AllocSize is read only by
// the writer (when the commit grows the file), and this runs holding the
// writer's lock, so setting it here races with nothing.
func update(db *bbolt.DB, fn func(tx *bbolt.Tx) error) error {
	return db.Update(func(tx *bbolt.Tx) error {
		db.AllocSize = growStep(tx.Size())
		return fn(tx)
	})
}
