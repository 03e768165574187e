package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Index problem kinds.
const (
	// IndexMissing: a record lacks an index entry it must have.
	IndexMissing = "missing"
	// IndexOrphan: an index entry whose record is gone or no longer
	// matches it (another status, owner, controller, end time, or an
	// idempotency key that names another task).
	IndexOrphan = "orphan"
	// RecordDamaged: a record that does not decode or should not exist
	// (a DamagedRecord), so it must have no index entries: the entries
	// that name it are reported as orphans. Repair leaves the record
	// alone; Quarantine moves it away.
	RecordDamaged = "damaged"
)

// IndexProblem is one disagreement between the records and their
// secondary indexes.
type IndexProblem struct {
	// Kind is IndexMissing, IndexOrphan or RecordDamaged.
	Kind string `json:"kind"`
	// Key is the index entry at fault (or, for RecordDamaged, the
	// record's key).
	Key string `json:"key,omitempty"`
	// Record is the key of the record the entry belongs to, when known.
	Record string `json:"record,omitempty"`
	// Detail says what is wrong in words.
	Detail string `json:"detail"`
}

// indexWant is what the indexes must hold: every entry with the record it
// belongs to and the value it must have (a task id for idempotency
// entries, empty for the rest).
type indexWant struct {
	record string
	value  string
}

// CheckIndexes compares every secondary index entry with the records, in
// one read transaction, and returns the problems found, sorted by key.
// Every write keeps them in step, so a healthy store has none; a problem
// means damage from outside (a bug, a manual edit, a torn restore).
// RepairIndexes fixes the missing and orphan ones. It takes time and
// memory linear in the records.
func (e *Engine) CheckIndexes() ([]IndexProblem, error) {
	var out []IndexProblem
	err := e.view(func(tx store.ReadTx) (err error) {
		out, _, err = checkIndexes(tx)
		return err
	})
	return out, err
}

// RepairIndexes makes the indexes match the records in one transaction:
// it adds missing entries and deletes orphan ones, among them every entry
// of a damaged record, which is never indexed. Damaged records are left
// as they are (Quarantine moves them). It returns how many entries it changed.
func (e *Engine) RepairIndexes() (int, error) {
	var n int
	err := e.st.Update(e.ctx, func(tx store.Tx) error {
		n = 0
		problems, want, err := checkIndexes(tx)
		if err != nil {
			return err
		}
		for _, p := range problems {
			switch p.Kind {
			case IndexMissing:
				_, err = tx.Put(p.Key, []byte(want[p.Key].value))
			case IndexOrphan:
				if w, ok := want[p.Key]; ok { // the right key with the wrong value
					_, err = tx.Put(p.Key, []byte(w.value))
				} else {
					err = tx.Delete(p.Key)
				}
			default:
				continue
			}
			if err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// checkIndexes returns the problems, sorted by key, and the entries the
// records call for, which RepairIndexes writes from.
func checkIndexes(tx store.ReadTx) ([]IndexProblem, map[string]indexWant, error) {
	want, out, err := wantedIndexes(tx)
	if err != nil {
		return nil, nil, err
	}
	// present holds the wanted keys that have an entry; one with the
	// wrong value is reported as an orphan, not also as missing.
	present := make(map[string]bool, len(want))
	err = tx.Scan("idx/", store.ScanOptions{}, func(it store.Item) bool {
		w, ok := want[it.Key]
		switch {
		case !ok:
			out = append(out, IndexProblem{Kind: IndexOrphan, Key: it.Key, Record: indexedRecord(it),
				Detail: "no record has this index entry: its record is gone or no longer matches it"})
			return true
		case string(it.Value) != w.value:
			out = append(out, IndexProblem{Kind: IndexOrphan, Key: it.Key, Record: w.record,
				Detail: fmt.Sprintf("the entry names %q, but %s holds this key", it.Value, w.record)})
		}
		present[it.Key] = true
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	for k, w := range want {
		if !present[k] {
			out = append(out, IndexProblem{Kind: IndexMissing, Key: k, Record: w.record, Detail: w.record + " has no index entry " + k})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out, want, nil
}

// wantedIndexes lists every index entry the readable records call for,
// and the damaged records, which call for none.
func wantedIndexes(tx store.ReadTx) (map[string]indexWant, []IndexProblem, error) {
	want := map[string]indexWant{}
	var bad []IndexProblem
	// note records what one record calls for; err is scanRecord's,
	// always a *DamagedRecord.
	note := func(it store.Item, keys []string, err error) bool {
		if d := damaged(err); d != nil {
			bad = append(bad, IndexProblem{Kind: RecordDamaged, Key: it.Key, Record: it.Key, Detail: d.Reason})
		}
		for _, k := range keys {
			want[k] = indexWant{record: it.Key}
		}
		return true
	}
	err := tx.Scan(flowPrefix, store.ScanOptions{}, func(it store.Item) bool {
		f, err := scanRecord[sdk.Flow](it)
		if err != nil {
			return note(it, nil, err)
		}
		if f.IdempotencyKey != "" {
			want[flowIdemKey(f.ControllerID, f.IdempotencyKey)] = indexWant{record: it.Key, value: f.ID}
		}
		return note(it, flowIndexKeys(f), nil)
	})
	if err != nil {
		return nil, nil, err
	}
	err = tx.Scan(taskPrefix, store.ScanOptions{}, func(it store.Item) bool {
		t, err := scanRecord[stored.Task](it)
		if err != nil {
			return note(it, nil, err)
		}
		if t.IdempotencyKey != "" {
			want[idemKey(t.IdempotencyKey)] = indexWant{record: it.Key, value: t.ID}
		}
		return note(it, taskIndexKeys(t), nil)
	})
	if err != nil {
		return nil, nil, err
	}
	return want, bad, nil
}

// indexedRecord names the record an orphan entry points at: the id after
// the last slash (the value, for an idempotency entry).
func indexedRecord(it store.Item) string {
	switch {
	case strings.HasPrefix(it.Key, idxTaskIdem):
		return taskKey(string(it.Value))
	case strings.HasPrefix(it.Key, idxFlowIdem):
		return flowKey(string(it.Value))
	case strings.HasPrefix(it.Key, "idx/flow/"):
		return flowKey(it.Key[strings.LastIndexByte(it.Key, '/')+1:])
	}
	return taskKey(it.Key[strings.LastIndexByte(it.Key, '/')+1:])
}
