package engine

import (
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/host/store"
)

// CronRecords is the namespace of the scheduler's records: jobs, their
// runtime state, run history and delivery outbox (host/scheduler).
const CronRecords = "cron/"

// TriggerRecords is the namespace of webhook triggers: their definitions,
// and the deliveries they accepted (host/trigger).
const TriggerRecords = "trigger/"

// recordNamespaces lists every namespace UpdateRecords and ViewRecords
// lend. None overlaps the engine's own keys (flow/, task/, event/,
// eventseq/, idx/, quarantine/).
var recordNamespaces = []string{CronRecords, TriggerRecords}

// RecordReadTx reads the keys of one record namespace in a consistent
// snapshot. Keys are full keys, namespace included; a key or prefix outside
// the namespace is refused with an error that names both.
type RecordReadTx interface {
	// Get returns the item at key, or store.ErrKeyNotFound.
	Get(key string) (store.Item, error)
	// Scan calls fn for each item whose key starts with prefix, as
	// store.ReadTx.Scan does. prefix must lie inside the namespace.
	Scan(prefix string, opts store.ScanOptions, fn func(store.Item) bool) error
}

// RecordTx reads and writes the keys of one record namespace; every Put
// and Delete of one UpdateRecords commits together or not at all.
type RecordTx interface {
	RecordReadTx
	// Put stores value at key. A value over store.MaxValueSize is refused
	// with store.ErrValueTooLarge.
	Put(key string, value []byte) error
	// Delete removes key; a missing key is not an error.
	Delete(key string) error
}

// UpdateRecords runs fn in one engine write transaction confined to the
// record namespace ns (CronRecords, TriggerRecords). It is how a part of the host that
// keeps records of its own writes them without opening a store
// transaction: the engine stays the only writer.
//
// The rules are those of every engine write. fn may run more than once
// (concurrent writes are committed together) and must be idempotent: reset
// what it captures at its start. An error fn returns before it writes
// anything is a refusal: it is returned to the caller and the other
// writers of the commit are unaffected. An error after a write rolls the
// whole commit back, so read and decide first, then write. An unknown ns
// is refused before fn runs.
func (e *Engine) UpdateRecords(ns string, fn func(RecordTx) error) error {
	if err := checkNamespace(ns); err != nil {
		return err
	}
	return e.write(func(t *txn) error { return fn(recordTx{t: t, ns: ns}) })
}

// UpdateRecordsFenced is UpdateRecords committed only while fence f holds
// (see store.Fence): a scheduler that lost its leadership cannot record a
// fire, however late its write arrives. A fallen fence fails it with an
// error wrapping store.ErrFenced and writes nothing; a store that cannot
// fence (bbolt, served by one process) refuses it.
func (e *Engine) UpdateRecordsFenced(f store.Fence, ns string, fn func(RecordTx) error) error {
	if err := checkNamespace(ns); err != nil {
		return err
	}
	fencer, ok := e.st.(store.Fencer)
	if !ok {
		return fmt.Errorf("engine: this store (%T) cannot fence a write; fences are for a store shared by several processes, such as etcd", e.st)
	}
	return e.writeWith(func(tx func(store.Tx) error) error { return fencer.UpdateFenced(e.ctx, f, tx) },
		func(t *txn) error { return fn(recordTx{t: t, ns: ns}) })
}

// ViewRecords runs fn in one read transaction confined to the record
// namespace ns. An unknown ns is refused before fn runs.
func (e *Engine) ViewRecords(ns string, fn func(RecordReadTx) error) error {
	if err := checkNamespace(ns); err != nil {
		return err
	}
	return e.view(func(tx store.ReadTx) error { return fn(recordReadTx{tx: tx, ns: ns}) })
}

// checkNamespace refuses a namespace the engine does not lend.
func checkNamespace(ns string) error {
	for _, n := range recordNamespaces {
		if ns == n {
			return nil
		}
	}
	return fmt.Errorf("engine: record namespace %q is not one the engine lends (it lends %s); add it to recordNamespaces in host/engine/records.go", ns, strings.Join(recordNamespaces, ", "))
}

// recordReadTx confines a read transaction to ns.
type recordReadTx struct {
	tx store.ReadTx
	ns string
}

// inside refuses a key or prefix outside the namespace.
func inside(ns, key string) error {
	if strings.HasPrefix(key, ns) {
		return nil
	}
	return fmt.Errorf("engine: key %q is outside the record namespace %q; this transaction reads and writes only keys that start with it", key, ns)
}

func (r recordReadTx) Get(key string) (store.Item, error) {
	if err := inside(r.ns, key); err != nil {
		return store.Item{}, err
	}
	return r.tx.Get(key)
}

func (r recordReadTx) Scan(prefix string, opts store.ScanOptions, fn func(store.Item) bool) error {
	if err := inside(r.ns, prefix); err != nil {
		return err
	}
	return r.tx.Scan(prefix, opts, fn)
}

// recordTx confines an engine write transaction to ns.
type recordTx struct {
	t  *txn
	ns string
}

func (r recordTx) Get(key string) (store.Item, error) {
	return recordReadTx{tx: r.t.tx, ns: r.ns}.Get(key)
}

func (r recordTx) Scan(prefix string, opts store.ScanOptions, fn func(store.Item) bool) error {
	return recordReadTx{tx: r.t.tx, ns: r.ns}.Scan(prefix, opts, fn)
}

func (r recordTx) Put(key string, value []byte) error {
	if err := inside(r.ns, key); err != nil {
		return err
	}
	return r.t.putRaw(key, value)
}

func (r recordTx) Delete(key string) error {
	if err := inside(r.ns, key); err != nil {
		return err
	}
	return r.t.del(key)
}
