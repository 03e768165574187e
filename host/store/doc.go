// Package store is flowgate's storage seam: a small transactional key-value
// store with a revision on every key, and its embedded backend on bbolt.
//
// # Model
//
// A Store runs read transactions (View) and read-write transactions
// (Update). Inside them, Get, Scan, Put and Delete work on string keys and
// byte values. Every key carries a revision that starts at 1 and grows by one
// on each Put, so callers can implement compare-and-swap on top: read,
// compare the revision they expected, write, all in one Update.
//
// The engine (host/engine) is written once over this interface. Backends are
// bbolt (Open, the embedded default) and etcd (package host/store/etcd).
// The storetest package is the conformance suite every backend must pass.
// Buffer keeps a transaction's writes in memory over a read transaction,
// for a backend that commits them in one request (etcd).
//
// # Contexts
//
// View, Update and a Fencer's UpdateFenced take the caller's context
// first, and a transaction's Get, Scan, Put and Delete are bounded by it:
// on etcd every request is, so a request or a loop that stops stops its
// store calls at once, with an error wrapping the context's. On bbolt the
// context is checked before a transaction begins; a transaction on the
// local file is short and is not interrupted. TestStoreCallsTakeAContext
// (and its etcd twin) fails on a store method that does I/O without one.
//
// # Reading only
//
// OpenReadOnly opens a store file without changing a byte of it (bbolt's
// ReadOnly, under a shared lock, so readers run side by side); its Update
// always fails with ErrReadOnly. An Overlay over it keeps writes in memory,
// for showing what a writer would record; Seal then ends the writing. Open
// refuses a file whose mode does not let its owner write it.
//
// # Damaged files
//
// bbolt trusts every page it reads: a damaged one makes it loop, exhaust
// memory, fail an assertion or read outside its map, which kills the
// process. So before bbolt sees a file, a bounded walk reads its pages
// with plain reads (all of them for Open, the branch pages for
// OpenReadOnly, none for OpenForCheck) and refuses damage with an error
// wrapping ErrCorrupt; PageProblems walks every page before bbolt's own
// check. Every bbolt call runs under a guard that turns a panic or a
// memory fault into such an error, naming the page, and a Bolt that met
// one takes no more writes. An empty file is damaged too: Open creates a
// new store whole. Salvage copies the records of a damaged file that can
// still be read into a new store.
//
// # File size
//
// The file grows in steps about as large as its data, from 64 KiB to
// 16 MiB, so a new store stays small.
//
// # Group commit
//
// Writers that arrive while a commit is on its way to disk are committed
// together in the next transaction, with one pair of fsyncs for all of them.
// A lone writer commits at once; there is no batching timer. Because of
// this, an Update function may run more than once and must be idempotent.
//
// # A full disk
//
// A commit that cannot reach the disk fails with an error wrapping
// ErrWriteFailed and its cause (DiskFull tells ENOSPC); nothing of it is
// stored and the store stays usable, so writes resume by themselves once
// there is room. WriteHealth says whether the last commit succeeded, why
// the last one failed, and when one last succeeded.
//
// # Caveats
//
// Keep transactions short. A long read transaction holds old pages alive
// and can stall the writer when the file must be remapped. Never call
// Update from inside View. Values are capped at MaxValueSize.
package store
