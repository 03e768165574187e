package store

import (
	"bytes"
	"errors"

	"go.etcd.io/bbolt"
)

// Scan implements ReadTx.
func (t readTx) Scan(prefix string, opts ScanOptions, fn func(Item) bool) error {
	if opts.Limit < 0 {
		return errors.New("store: ScanOptions.Limit must not be negative")
	}
	p := []byte(prefix)
	c := t.bucket.Cursor()
	k, v := scanStart(c, p, opts)
	for n := 0; k != nil && bytes.HasPrefix(k, p); {
		item, err := decode(string(k), v)
		if err != nil {
			return err
		}
		if !fn(item) {
			return nil
		}
		if n++; n == opts.Limit {
			return nil
		}
		switch {
		case t.writable:
			// fn may have written through the same bucket, which leaves
			// the cursor pointing at stale pages: find our place again.
			k, v = seekPast(c, []byte(item.Key), opts.Reverse)
		case opts.Reverse:
			k, v = c.Prev()
		default:
			k, v = c.Next()
		}
	}
	return nil
}

// scanStart positions c on the first key of the scan: the smallest key at
// or above prefix (or just above After), or, in reverse, the largest key
// below the end of the prefix range (or just below After).
func scanStart(c *bbolt.Cursor, prefix []byte, opts ScanOptions) ([]byte, []byte) {
	after := []byte(opts.After)
	if !opts.Reverse {
		if opts.After != "" && bytes.Compare(after, prefix) >= 0 {
			return seekPast(c, after, false)
		}
		return c.Seek(prefix)
	}
	end := prefixEnd(prefix)
	if opts.After != "" && (end == nil || bytes.Compare(after, end) < 0) {
		end = after
	}
	if end == nil {
		return c.Last()
	}
	return seekPast(c, end, true)
}

// seekPast positions c on the first key strictly after key, or strictly
// before it when reverse is set.
func seekPast(c *bbolt.Cursor, key []byte, reverse bool) ([]byte, []byte) {
	k, v := c.Seek(key)
	if !reverse {
		if k != nil && bytes.Equal(k, key) {
			return c.Next()
		}
		return k, v
	}
	if k == nil {
		return c.Last()
	}
	return c.Prev()
}

// prefixEnd returns the smallest key greater than every key that starts
// with prefix, or nil when there is none (an empty prefix, or one made of
// 0xff bytes only).
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
