package api

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// Storage is the part of Client that copies and verifies the store file.
// A gateway copies inside a read transaction while its writers carry on;
// the page check holds writers back while it runs (see
// store.Bolt.PageProblems), the index check does not.
type Storage interface {
	// Backup writes a consistent copy of the whole store file to w, from
	// one read transaction, and returns the bytes written. The copy opens
	// like the original. Use BackupFile to write one to a file safely.
	Backup(ctx context.Context, w io.Writer) (int64, error)
	// Check verifies the store: bbolt's page check, then, if the pages
	// are sound, every index entry against its record and every record
	// against its indexes. Damage is reported in the CheckReport; the
	// error is for a check that could not run.
	Check(ctx context.Context) (apitype.CheckReport, error)
}

// storeFile is a store kept in one file that can copy and check itself:
// *store.Bolt, and *store.ReadOnly when no gateway runs.
type storeFile interface {
	Path() string
	WriteTo(w io.Writer) (int64, error)
	PageProblems() ([]string, error)
}

// OpenLocalReadOnly opens the store in home dir read-only and returns a
// Local client whose reads work and whose writes fail with
// store.ErrReadOnly: for copying and checking the store exactly as it is,
// never writing to a file that may be damaged. Unlike OpenLocal it does
// not bring the records up to date first, and it opens the file with
// store.OpenForCheck: read records only after Check found the pages
// sound. A missing store fails with an error wrapping fs.ErrNotExist; one
// whose meta pages are damaged with an error wrapping store.ErrCorrupt.
func OpenLocalReadOnly(dir string) (*Local, error) {
	st, err := store.OpenForCheck(filepath.Join(dir, home.DBFile), store.Options{})
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		st.Close()
		return nil, err
	}
	return NewLocal(st, eng, dir, nil), nil
}

// file returns the store as a file, or an error when the store is kept
// some other way.
func (l *Local) file() (storeFile, error) {
	f, ok := l.st.(storeFile)
	if !ok {
		return nil, fmt.Errorf("the store of %s is not a single file (%T): back it up and check it with its own tools", l.home, l.st)
	}
	return f, nil
}

// Backup writes a consistent copy of the store file to w. It stops with
// ctx's error when ctx ends.
func (l *Local) Backup(ctx context.Context, w io.Writer) (int64, error) {
	f, err := l.file()
	if err != nil {
		return 0, err
	}
	return f.WriteTo(ctxWriter{ctx: ctx, w: w})
}

// ctxWriter fails writes once its context has ended, so that a copy in
// progress stops when its caller goes away.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// BackupFile writes a backup of the store s serves to path with
// store.WriteBackup: a temporary file next to path, synced, page-checked
// and renamed, so that path only ever holds a complete, checked copy.
// opts.Live should name the store file, so that it is never overwritten.
// It fails when path exists and opts.Force is false (error wrapping
// fs.ErrExist), when the copy breaks off, and when the copy fails its
// page check (error wrapping store.ErrCorrupt). It leaves the result's
// Gateway to its caller, which knows whether a gateway took the copy.
func BackupFile(ctx context.Context, s Storage, path string, opts store.BackupOptions) (apitype.BackupResult, error) {
	start := time.Now()
	rep, err := store.WriteBackup(path, opts, func(w io.Writer) (int64, error) { return s.Backup(ctx, w) })
	if err != nil {
		return apitype.BackupResult{}, err
	}
	res := apitype.BackupResult{Path: rep.Path, Size: rep.Size, Revision: rep.Revision, Records: rep.Keys, Duration: time.Since(start).Seconds()}
	for _, n := range rep.Keys {
		res.Keys += n
	}
	return res, nil
}
