package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Names of the files in an attempt directory. See the package
// documentation for who writes each and when. The JSON files are those
// of shims from before the record file (RecordFile), which this package
// still reads: ReadRecord reads them for an attempt that has no record
// file.
const (
	// SpecFile held the Spec, written by the gateway before launching;
	// a spec now reaches the shim on its stdin (see Launch). The shim
	// still reads the file when its stdin is not a pipe.
	SpecFile = "spec.json"
	// InfoFile held the shim's own ProcInfo (Record.Shim).
	InfoFile = "shim.json"
	// ChildFile held the child's ProcInfo (Record.Child).
	ChildFile = "child.json"
	// StatusFile held the Status (Record.Status).
	StatusFile = "status.json"
	// StdoutFile and StderrFile receive the child's output.
	StdoutFile = "stdout"
	StderrFile = "stderr"
)

// Claimed reports whether a shim has claimed attempt directory dir by
// writing its identity to the record (or, a shim from before the record
// file, by writing shim.json): from then on the child may have started;
// before, it certainly has not. An attempt the gateway withdrew
// (Withdraw) is not claimed. When the answer is unknown it returns true,
// the safe side, and the error.
func Claimed(dir string) (bool, error) {
	rec, err := readRecordFile(dir)
	switch {
	case err == nil && (rec.Shim != nil || rec.Status != nil && !rec.withdrawn()):
		return true, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return true, err
	}
	return legacyClaimed(dir)
}

// legacyClaimed reports whether a shim from before the record file
// claimed dir: it wrote shim.json.
func legacyClaimed(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, InfoFile))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return true, err
}

// WriteJSONAtomic writes v as JSON to path so that a reader sees either no
// file or the whole of it: it writes a temporary file in the same
// directory, syncs it, renames it over path and syncs the directory. The
// file is created 0600. On failure path is left as it was and no temporary
// file remains.
func WriteJSONAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxJSONFile bounds what readJSON reads: the files it reads hold one
// small record.
const maxJSONFile = 1 << 20

// readJSON decodes the JSON file at path into v. A missing file gives an
// error that matches fs.ErrNotExist; one that is not a regular file (the
// task replaced it) is refused (see OpenTaskFile).
func readJSON(path string, v any) error {
	f, err := OpenTaskFile(path)
	if err != nil {
		return err // a *fs.PathError naming the file, or the refusal
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJSONFile))
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
