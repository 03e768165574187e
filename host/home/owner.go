package home

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/flowgate/flowgate/sdk/filetrust"
)

// Check refuses a home that someone other than the current user controls:
// the directory dir, and the store file in it when there is one, must be
// owned by the current user and not writable by group or others. Whoever
// can write there can replace the store or put a listener of their own
// where the gateway socket goes, and so read every task's command and
// answer as the gateway. A missing dir or store file is not an error here.
// The error names the path, its owner or mode, and the command that fixes
// it.
func Check(dir string) error {
	for _, p := range []string{dir, filepath.Join(dir, DBFile)} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("flowgate home %s: %w", p, err)
		}
		if err := Owned(p, fi, map[int]bool{os.Getuid(): true}); err != nil {
			return err
		}
	}
	return nil
}

// Owned returns nil when fi, the Lstat of path, is owned by one of uids
// and not writable by group or others; otherwise an error naming path,
// what is wrong, and how to fix it.
func Owned(path string, fi fs.FileInfo, uids map[int]bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot tell who owns it on this system", path)
	}
	if uid := os.Getuid(); !uids[int(st.Uid)] {
		return fmt.Errorf("%s is owned by %s, not by you (%s): another user could read your tasks or answer as your gateway; "+
			"use a home of your own (--home or %s), or if it is yours, run: chown -R %d %s", path, filetrust.UserName(int(st.Uid)), filetrust.UserName(uid), EnvVar, uid, path)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o): anyone who can write there could replace the store or the gateway socket; "+
			"run: chmod go-w %s", path, fi.Mode().Perm(), path)
	}
	return nil
}
