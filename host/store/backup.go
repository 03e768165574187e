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
)

// BackupOptions tunes WriteBackup. The zero value refuses to replace an
// existing file and guards no live store.
type BackupOptions struct {
	// Force replaces a file already at the target path. If false, such a
	// file is refused with an error wrapping fs.ErrExist and left alone.
	Force bool
	// Live is the path of the store file being copied. A target that is
	// this file, or its holder record, is refused whatever Force says, so
	// a backup never lands on the store it copies. Empty guards nothing.
	Live string
	// Check tunes the page check of the copy (CheckFile); the zero value
	// is ready to use.
	Check Options
}

// WriteBackup writes a copy of a store to path. write produces the bytes
// (Bolt.WriteTo, ReadOnly.WriteTo, or a gateway's stream of either) into a
// temporary file next to path; the copy is synced, opened read-only and
// page-checked with CheckFile, and only then renamed to path, with the
// directory synced after. On any failure the temporary file is removed and
// path is left as it was: there is never a partial backup at path. A copy
// that fails its page check is refused with an error wrapping ErrCorrupt.
// It returns the report of the checked copy.
func WriteBackup(path string, opts BackupOptions, write func(io.Writer) (int64, error)) (FileReport, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return FileReport{}, fmt.Errorf("backup: resolve %s: %w", path, err)
	}
	if err := refuseLive(path, opts.Live); err != nil {
		return FileReport{}, err
	}
	if !opts.Force {
		if err := refuseExisting(path); err != nil {
			return FileReport{}, err
		}
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return FileReport{}, fmt.Errorf("backup: create a temporary file next to %s: %w", path, err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name()) // fails harmlessly after a rename
	}()
	n, err := write(tmp)
	if err != nil {
		return FileReport{}, fmt.Errorf("backup: copy the store into %s after %d bytes: %w", tmp.Name(), n, err)
	}
	if err := tmp.Sync(); err != nil {
		return FileReport{}, fmt.Errorf("backup: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return FileReport{}, fmt.Errorf("backup: close %s: %w", tmp.Name(), err)
	}
	rep, err := CheckFile(tmp.Name(), opts.Check)
	if err != nil {
		return FileReport{}, fmt.Errorf("backup: the copy does not open: %w", err)
	}
	if len(rep.Problems) > 0 {
		return FileReport{}, fmt.Errorf("%w: backup: the copy fails bbolt's page check (%d problems, first: %s); the store itself may be damaged: run flowgate check",
			ErrCorrupt, len(rep.Problems), rep.Problems[0])
	}
	if err := publish(tmp.Name(), path, opts.Force); err != nil {
		return FileReport{}, err
	}
	rep.Path = path
	if err := syncDir(dir); err != nil {
		return rep, fmt.Errorf("backup: %s is written, but syncing its directory failed (a crash now could lose it): %w", path, err)
	}
	return rep, nil
}

// refuseLive refuses a target that is the live store file (by path or by
// identity) or its holder record.
func refuseLive(path, live string) error {
	if live == "" {
		return nil
	}
	live, err := filepath.Abs(live)
	if err != nil {
		return fmt.Errorf("backup: resolve %s: %w", live, err)
	}
	target, liveReal := realPath(path), realPath(live)
	same := target == liveReal || strings.HasPrefix(target, holderPath(liveReal))
	if ti, err := os.Stat(path); err == nil {
		if li, err := os.Stat(live); err == nil && os.SameFile(ti, li) {
			same = true
		}
	}
	if same {
		return fmt.Errorf("backup: %s is the live store or its holder record; write the backup to another path", path)
	}
	return nil
}

// realPath resolves the symbolic links in path's directory, so that two
// spellings of one location compare equal. It returns path cleaned when
// the directory cannot be resolved.
func realPath(path string) string {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, filepath.Base(path))
}

// refuseExisting refuses a target that exists.
func refuseExisting(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("backup: %s already exists; pass --force to replace it, or choose another path: %w", path, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// publish moves the checked copy tmp to path. Without force it links
// instead of renaming, which fails if path appeared meanwhile, so an
// existing file is never replaced; file systems without hard links fall
// back to a rename after one more look.
func publish(tmp, path string, force bool) error {
	if !force {
		err := os.Link(tmp, path)
		switch {
		case err == nil:
			return nil // WriteBackup removes tmp
		case errors.Is(err, fs.ErrExist):
			return refuseExisting(path)
		case !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.ENOTSUP) && !errors.Is(err, syscall.EXDEV):
			return fmt.Errorf("backup: move the copy to %s: %w", path, err)
		}
		if err := refuseExisting(path); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("backup: move the copy to %s: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
