package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
)

// SalvageReport says what Salvage copied and what it could not.
type SalvageReport struct {
	// Source is the damaged store file; Path the new one.
	Source string `json:"source"`
	Path   string `json:"path"`
	// Copied counts the records copied by their first key segment
	// ("flow", "task", "idx", ...), as FileReport.Keys does: those the
	// walk from the root found and those the page scan found.
	Copied map[string]int `json:"copied"`
	// Scanned counts, the same way, the part of Copied that the page scan
	// found: records on leaf pages no readable page names, read when the
	// walk from the root lost pages ({} when it lost none).
	Scanned map[string]int `json:"scanned"`
	// ScannedPages is how many such leaf pages the scan found.
	ScannedPages int `json:"scanned_pages"`
	// Duplicates counts the older copies of a record the scan found and
	// dropped: a copy of a record the walk found, or a copy with a lower
	// revision than another the scan found.
	Duplicates int `json:"duplicates"`
	// Rejected counts the records on scanned pages that SalvageOptions.Valid
	// refused, left out of the new store.
	Rejected int `json:"rejected"`
	// Lost lists what could not be read: a damaged page (every record
	// under it is lost; Key is the first of them when a parent page names
	// it) or a single damaged record (Key is its key).
	Lost []SalvageLoss `json:"lost"`
	// LostByKind counts Lost by the first segment of Key; entries without
	// a key count under "unknown". A lost page may hold many records.
	LostByKind map[string]int `json:"lost_by_kind"`
	// Problems is what the page walk found, as Check reports it.
	Problems []string `json:"problems"`
}

// SalvageLoss is one thing Salvage could not copy.
type SalvageLoss struct {
	Page   uint64 `json:"page"`
	Key    string `json:"key,omitempty"`
	Reason string `json:"reason"`
}

// SalvageOptions configures Salvage. The zero value is ready to use.
type SalvageOptions struct {
	// Options bounds the wait for a writer's lock (LockTimeout) and
	// checks the new store as a backup is checked.
	Options
	// Valid, if set, vets each record the page scan finds, as its reader
	// decodes it (a page can parse and still hold another program's
	// bytes); a record it fails is left out and counted in
	// SalvageReport.Rejected. If nil, every record on a page that parses
	// is kept.
	Valid func(Item) error
}

// Salvage copies every record of the store file at src that can still be
// read into a new store file at dst, with its revision, and reports what
// was lost. It reads src with plain reads, page by page (see pageWalk),
// never through bbolt's map, skipping each damaged page and what lies
// under it; when that cuts the tree, it then scans every page the walk
// did not reach for leaf pages that still parse and copies their records
// too, the newest copy of each key (see scanLeaves). src is not changed.
// dst is written like a backup (see WriteBackup): a temporary file
// checked and then linked into place, so dst never holds a partial store. It fails with an error wrapping
// fs.ErrExist when dst exists, and with one wrapping ErrCorrupt when src
// has no valid meta page (nothing can be found). The new store's indexes
// may name records that were lost: `flowgate check` lists them and
// `flowgate tasks maintenance --apply` repairs them.
func Salvage(src, dst string, opts SalvageOptions) (SalvageReport, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return SalvageReport{}, fmt.Errorf("salvage: resolve %s: %w", src, err)
	}
	if _, err := os.Stat(src); err != nil {
		return SalvageReport{}, fmt.Errorf("salvage: %w", err)
	}
	switch _, err := os.Lstat(dst); {
	case err == nil:
		return SalvageReport{}, fmt.Errorf("salvage: %s already exists; choose a new path for the salvaged store: %w", dst, fs.ErrExist)
	case !errors.Is(err, fs.ErrNotExist):
		return SalvageReport{}, fmt.Errorf("salvage: %w", err)
	}
	unlock, err := lockShared(src, opts.WithDefaults().LockTimeout)
	if err != nil {
		return SalvageReport{}, err
	}
	defer unlock()
	rep := SalvageReport{Source: src, Copied: map[string]int{}, Scanned: map[string]int{}, LostByKind: map[string]int{}, Lost: []SalvageLoss{}}
	scratch, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".salvage-*")
	if err != nil {
		return SalvageReport{}, fmt.Errorf("salvage: create a scratch file next to %s: %w", dst, err)
	}
	scratch.Close()
	defer os.Remove(scratch.Name())
	db, err := bbolt.Open(scratch.Name(), 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		return SalvageReport{}, fmt.Errorf("salvage: %w", err)
	}
	defer db.Close()
	if err := copyRecords(src, db, opts.Valid, &rep); err != nil {
		return SalvageReport{}, err
	}
	out, err := WriteBackup(dst, BackupOptions{Live: src, Check: opts.Options}, func(w io.Writer) (int64, error) {
		var n int64
		err := db.View(func(tx *bbolt.Tx) (err error) { n, err = tx.WriteTo(w); return err })
		return n, err
	})
	if err != nil {
		return SalvageReport{}, fmt.Errorf("salvage: %w", err)
	}
	rep.Path = out.Path
	return rep, nil
}

// copyRecords walks src and puts every readable record into db's kv
// bucket, then, when the walk lost pages, the newest copy of each record
// the page scan finds that valid (if set) accepts, filling in rep.
func copyRecords(src string, db *bbolt.DB, valid func(Item) error, rep *SalvageReport) error {
	out := &salvageWriter{db: db, put: func(b *bbolt.Bucket, key, value []byte) error { return b.Put(key, value) }}
	w, err := walkFile(src, walkAll, func(key, value []byte) {
		if len(value) < revisionSize {
			rep.Lost = append(rep.Lost, SalvageLoss{Key: string(key), Reason: "its value is shorter than its revision header"})
			return
		}
		rep.Copied[keyKind(string(key))]++
		out.add(key, value) // the walk's buffers are not reused
	})
	if err != nil {
		return fmt.Errorf("salvage: %w", err)
	}
	if err := out.flush(); err != nil {
		return fmt.Errorf("salvage: write the new store: %w", err)
	}
	if len(w.lost) > 0 {
		out.put = newestCopy(rep)
		rep.ScannedPages, err = scanLeaves(src, w, func(key, value []byte, rev int64) {
			if valid != nil && valid(Item{Key: string(key), Value: value[revisionSize:], Revision: rev}) != nil {
				rep.Rejected++
				return
			}
			out.add(key, value)
		})
		if err != nil {
			return fmt.Errorf("salvage: %w", err)
		}
		if err := out.flush(); err != nil {
			return fmt.Errorf("salvage: write the new store: %w", err)
		}
	}
	if w.meta.hwm == 0 {
		return &corruptError{path: src, cause: fmt.Errorf("nothing can be salvaged: %s", strings.Join(w.problems, "; "))}
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte(bucketName))
		return err
	}); err != nil {
		return fmt.Errorf("salvage: write the new store: %w", err)
	}
	rep.Problems = w.problems
	for _, l := range w.lost {
		rep.Lost = append(rep.Lost, SalvageLoss{Page: l.ID, Key: l.FirstKey, Reason: l.Reason})
	}
	for _, l := range rep.Lost {
		kind := "unknown"
		if l.Key != "" {
			kind = keyKind(l.Key)
		}
		rep.LostByKind[kind]++
	}
	return nil
}

// lockShared takes the shared lock bbolt's readers take on the file at
// path, waiting up to timeout for a writer (then failing with an error
// wrapping ErrLocked that names it), and returns what releases it.
func lockShared(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("salvage: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() { f.Close() }, nil
		case !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline):
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &lockedError{path: path, holder: readHolder(path)}
			}
			return nil, fmt.Errorf("salvage: lock %s: %w", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keyKind is the first segment of key, as FileReport.Keys counts it.
func keyKind(key string) string {
	kind, _, _ := strings.Cut(key, "/")
	return kind
}
