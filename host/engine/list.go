package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flowgate/flowgate/host/store"
)

// listQuery is one newest-first page over records of type T, read either
// from the records themselves (prefix == records) or through an index whose
// entries end in the record id.
type listQuery[T any] struct {
	prefix  string // what to scan: the record prefix or an index prefix
	records string // the record prefix, e.g. flowPrefix
	after   string // cursor: only ids older than this one
	limit   int    // zero: no limit
	match   func(*T) bool
	id      func(*T) string
}

// run returns the matching records, newest first, and the cursor of the
// next page (empty on the last page).
func (q listQuery[T]) run(tx store.ReadTx) (out []*T, next string, err error) {
	opts := store.ScanOptions{Reverse: true}
	if q.after != "" {
		opts.After = q.prefix + q.after
	}
	var readErr error
	err = tx.Scan(q.prefix, opts, func(it store.Item) bool {
		v := new(T)
		if q.prefix == q.records {
			readErr = json.Unmarshal(it.Value, v)
			if readErr != nil {
				readErr = fmt.Errorf("decode %s: %w (the record is damaged; run flowgate check)", it.Key, readErr)
			}
		} else {
			readErr = getJSON(tx, q.records+lastSegment(it.Key), v)
			if errors.Is(readErr, store.ErrKeyNotFound) {
				// A stray entry whose record is gone: flowgate check and
				// the audit report it; a listing is not the place to fail.
				readErr = nil
				return true
			}
			if readErr != nil {
				readErr = fmt.Errorf("index entry %s: %w (run flowgate check)", it.Key, readErr)
			}
		}
		if readErr != nil {
			return false
		}
		if !q.match(v) {
			return true
		}
		if q.limit > 0 && len(out) == q.limit {
			next = q.id(out[len(out)-1])
			return false
		}
		out = append(out, v)
		return true
	})
	if err == nil {
		err = readErr
	}
	return out, next, err
}
