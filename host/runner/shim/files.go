package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Names of the files in an attempt directory. See the package
// documentation for who writes each and when.
const (
	// SpecFile holds the Spec; the gateway writes it before launching.
	SpecFile = "spec.json"
	// InfoFile holds the shim's own ProcInfo, written before the child
	// starts.
	InfoFile = "shim.json"
	// ChildFile holds the child's ProcInfo, written after it started.
	ChildFile = "child.json"
	// StatusFile holds the Status, written once the child has ended.
	StatusFile = "status.json"
	// StdoutFile and StderrFile receive the child's output.
	StdoutFile = "stdout"
	StderrFile = "stderr"
)

// Claimed reports whether the shim of attempt directory dir has claimed
// the attempt by writing shim.json: from then on the child may have
// started; before, it certainly has not. When the answer is unknown it
// returns true, the safe side, and the error.
//
// To withdraw an unclaimed attempt race-free, rename spec.json away first
// and call Claimed after: a shim that claims the attempt checks, after
// writing shim.json, that spec.json is still there; when it is not, the
// shim does not start the child and writes a "start-failed" status saying
// the spec was withdrawn.
func Claimed(dir string) (bool, error) {
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

// readJSON decodes the JSON file at path into v. A missing file gives an
// error that matches fs.ErrNotExist.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err // a *fs.PathError naming the file
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
