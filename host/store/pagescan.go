package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"unicode/utf8"

	"go.etcd.io/bbolt"
)

// scanLeaves is salvage's second pass, for a file whose tree the walk w
// could not follow to the end: the leaf pages under a lost branch page
// are still in the file, named by nothing, so it reads every page of the
// file at path that w did not reach, as bbolt's surgery and sqlite's
// .recover do, and passes the records of each page that parses as a leaf
// of the kv bucket to fn, with its revision. It returns how many such
// pages it found.
//
// bbolt keeps no checksum on a tree page, so a page parses when its
// header names its own position and says leaf, what it spans lies inside
// the file, and every element lies inside it, holds no bucket, and has a
// non-empty UTF-8 key sorting after the one before, a revision header and
// no more bytes than flowgate writes; one element that does not rejects
// the page. Pages the free list names are skipped (they hold older
// versions, or records since deleted); when the free list is lost too,
// such pages are read like the rest, and fn gets each copy of a key.
func scanLeaves(path string, w *pageWalk, fn func(key, value []byte, rev int64)) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	ps := int64(w.meta.pageSize)
	pages := uint64(info.Size() / ps)
	head := make([]byte, pageHeaderSize)
	found := 0
	for id := uint64(firstDataPageID); id < pages; id++ {
		if w.seen[id] || w.free[id] {
			continue
		}
		if _, err := f.ReadAt(head, int64(id)*ps); err != nil {
			continue
		}
		le := binary.LittleEndian
		overflow := uint64(le.Uint32(head[12:]))
		if le.Uint64(head) != id || le.Uint16(head[8:]) != leafPageFlag ||
			overflow > w.maxOverflow(leafPageFlag) || id+overflow >= pages {
			continue
		}
		p := make([]byte, int64(overflow+1)*ps)
		if _, err := f.ReadAt(p, int64(id)*ps); err != nil {
			continue
		}
		elems, ok := leafRecords(p)
		if !ok {
			continue
		}
		found++
		for _, e := range elems {
			fn(e.key, e.value, int64(binary.BigEndian.Uint64(e.value)))
		}
		id += overflow
	}
	return found, nil
}

// leafRecords returns the records of leaf page p, or false when one of
// them does not parse as a record flowgate wrote (see scanLeaves).
func leafRecords(p []byte) ([]element, bool) {
	count := int(binary.LittleEndian.Uint16(p[10:]))
	if count == 0 || pageHeaderSize+count*elementSize > len(p) {
		return nil, false
	}
	out := make([]element, 0, count)
	for i := range count {
		e, ok := elementAt(p, i)
		switch {
		case !ok, e.bucket, len(e.key) == 0, len(e.key) > bbolt.MaxKeySize, !utf8.Valid(e.key),
			i > 0 && bytes.Compare(e.key, out[i-1].key) <= 0,
			len(e.value) < revisionSize, len(e.value) > revisionSize+MaxValueSize,
			int64(binary.BigEndian.Uint64(e.value)) <= 0:
			return nil, false
		}
		out = append(out, e)
	}
	return out, true
}
