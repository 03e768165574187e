package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
)

// holder is the record a process leaves next to the store file while it has
// the store open, so that a process that finds the file locked can name it.
// The flock on the store file is the lock; this file only describes it.
type holder struct {
	PID   int       `json:"pid"`
	Owner string    `json:"owner"`
	Since time.Time `json:"since"`
}

// holderPath is where the holder record for the store at path lives.
func holderPath(path string) string { return path + ".holder" }

// writeHolder replaces the holder record for the store at path. It writes a
// temporary file and renames it, so a reader never sees half a record.
func writeHolder(path string, h holder) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".holder-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), holderPath(path))
}

// readHolder returns the holder record for the store at path, or nil if
// there is none or it cannot be parsed.
func readHolder(path string) *holder {
	data, err := os.ReadFile(holderPath(path))
	if err != nil {
		return nil
	}
	var h holder
	if err := json.Unmarshal(data, &h); err != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// removeHolder deletes the holder record for the store at path. A failure
// is only logged: the record describes the lock, it is not the lock.
func removeHolder(path string, logger hclog.Logger) {
	if err := os.Remove(holderPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		logger.Warn("cannot remove the holder file", "path", holderPath(path), "error", err)
	}
}
