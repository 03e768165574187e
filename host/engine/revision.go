package engine

import (
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// A flow's revision is the store's revision of its key (store.Item.Revision,
// etcd's Version): 1 once the flow is created, one more on every write. The
// engine keeps no counter of its own. Reads fill sdk.Flow.Revision from the
// item; saveFlow takes it from the Put; the stored JSON never holds it.

// storedFlow is a flow as its record holds it: the flow's JSON without a
// revision. Revision shadows sdk.Flow's field of the same JSON name (the
// shallower field wins) and, left nil, is omitted, so the bytes carry no
// number that could go stale. Records written before the revision moved
// to the store still hold one; decodeRecord overwrites it with the item's.
type storedFlow struct {
	*sdk.Flow
	Revision *int64 `json:"revision,omitempty"`
}

// decodeRecord decodes the record in it into a new T. A flow takes its
// revision from the item. A record that does not decode, or a flow or
// task the engine could not have written (see validate), fails with a
// *DamagedRecord naming its key.
//
// A task's or flow's record read again with the same bytes is copied
// from the last decoding of them rather than decoded (see decoded).
func decodeRecord[T any](it store.Item) (*T, error) { return decodeItem[T](it, true) }

// scanRecord is decodeRecord for a read that goes over many records
// once (a listing, a check): it copies a record the memo holds, but
// decodes any other without keeping it, so that a listing pays no copy
// for each record and does not push out the records a task's path reads
// again.
func scanRecord[T any](it store.Item) (*T, error) { return decodeItem[T](it, false) }

// decodeItem is decodeRecord, keeping what it decodes in the memo when
// keep is set.
func decodeItem[T any](it store.Item, keep bool) (*T, error) {
	memo := memoized[T]()
	v := (*T)(nil)
	if memo {
		v = memoGet[T](&decoded, it.Key, it.Value)
	}
	if v == nil {
		var err error
		if v, err = decodeValid[T](it); err != nil {
			return nil, err
		}
		if memo && keep {
			decoded.put(it.Key, it.Value, v)
			v = cloneRecord(v)
		}
	}
	if f, ok := any(v).(*sdk.Flow); ok {
		f.Revision = it.Revision
		legacyOutput(f)
	}
	return v, nil
}

// decodeValid decodes the record in it into a new T and validates it.
func decodeValid[T any](it store.Item) (*T, error) {
	v := new(T)
	var err error
	if f, ok := any(v).(*sdk.Flow); ok {
		err = unmarshalFlow(it.Value, f)
	} else {
		err = json.Unmarshal(it.Value, v)
	}
	if err != nil {
		return nil, &DamagedRecord{Key: it.Key, Reason: "it does not decode: " + err.Error()}
	}
	if err := validate(it.Key, v); err != nil {
		return nil, &DamagedRecord{Key: it.Key, Reason: err.Error()}
	}
	return v, nil
}

// putFlow writes f's record and sets f.Revision to the key's new revision.
// old is the flow as this transaction read it (nil for a new flow).
//
// One engine operation is one write to a flow, so that it bumps the
// revision by exactly one, and so that a backend whose transactions take
// one operation per key (etcd) can run it. A second write of the same flow
// in one transaction, or a Put that does not land one revision past old
// (the key moved under the caller), is a bug in the engine: the
// transaction is rolled back rather than commit it.
func (t *txn) putFlow(old, f *sdk.Flow) error {
	if t.flows[f.ID] {
		return fmt.Errorf("flow %s is written twice in one transaction (a bug in the engine; nothing was changed)", f.ID)
	}
	b, err := encodeFlow(f)
	if err != nil {
		return fmt.Errorf("encode flow %s: %w", f.ID, err)
	}
	if t.flows == nil {
		t.flows = map[string]bool{}
	}
	t.flows[f.ID] = true
	t.wrote = true
	rev, err := t.tx.Put(flowKey(f.ID), b)
	if err != nil {
		return err
	}
	want := int64(1)
	if old != nil {
		want = old.Revision + 1
	}
	if rev != want {
		return fmt.Errorf("flow %s: the write landed at revision %d, not %d: it was written from a stale read (a bug in the engine; nothing was changed)", f.ID, rev, want)
	}
	f.Revision = rev
	return nil
}

// checkExpected refuses an expected revision no flow can have: revisions
// start at 1, so a negative one is a mistake in the request, not a stale
// read (0 is a stale read: the flow was written since).
func checkExpected(expected int64) error {
	if expected < 0 {
		return invalid("expected revision %d is negative; pass the revision flowgate tasks flow show prints", expected)
	}
	return nil
}
