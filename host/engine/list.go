package engine

import (
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
	// scan bounds how many entries one page examines, zero: no bound. A
	// page that reaches it before it is full ends there, with the cursor
	// of the last entry examined, so a filter that matches few records
	// costs at most scan reads per page.
	scan int
	// older, when set, reports whether an entry's key is older than the
	// range wanted; the scan, newest first, stops at the first such one.
	older func(key string) bool
	match func(*T) bool
	id    func(*T) string
}

// run returns the matching records, newest first, the cursor of the next
// page (empty on the last page), and the damaged records it skipped: one
// record that cannot be read never hides the others (nor locks out the
// maintenance that quarantines it).
func (q listQuery[T]) run(tx store.ReadTx) (out []*T, next string, bad []DamagedRecord, err error) {
	opts := store.ScanOptions{Reverse: true}
	if q.after != "" {
		opts.After = q.prefix + q.after
	}
	var readErr error
	examined, last := 0, ""
	err = tx.Scan(q.prefix, opts, func(it store.Item) bool {
		if q.older != nil && q.older(it.Key) {
			return false
		}
		if q.scan > 0 && examined == q.scan {
			next = lastSegment(last)
			return false
		}
		examined, last = examined+1, it.Key
		var v *T
		if q.prefix == q.records {
			v, readErr = scanRecord[T](it)
		} else {
			var ok bool
			if v, ok, readErr = indexed(tx, q.records, it.Key, scanRecord[T]); readErr == nil && !ok {
				return true
			}
		}
		if d := damaged(readErr); d != nil {
			bad, readErr = append(bad, *d), nil
			return true
		}
		if readErr != nil {
			if q.prefix != q.records {
				readErr = fmt.Errorf("index entry %s: %w (run flowgate check)", it.Key, readErr)
			}
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
	return out, next, bad, err
}

// indexed loads the record of type T that index entry key points at: the
// record under prefix records whose id is the key's last segment. ok is
// false for a stray entry whose record is gone; flowgate check and the
// audit report those, and reads skip them rather than fail. decode is
// decodeRecord, or scanRecord for a read over many records.
func indexed[T any](tx store.ReadTx, records, key string, decode func(store.Item) (*T, error)) (v *T, ok bool, err error) {
	it, err := tx.Get(records + lastSegment(key))
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err == nil {
		v, err = decode(it)
	}
	return v, err == nil, err
}
