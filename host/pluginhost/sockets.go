package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// The unix sockets of a gateway's plugins (each plugin's gRPC server, and
// the Host service the gateway serves back to it) live in one directory
// per gateway process, $TMPDIR/flowgate-UID/PID. A process that ends
// cleanly closes its sockets, which removes them; one killed with SIGKILL
// leaves them behind, so the first plugin launch of every process removes
// the directories of processes that are gone. Without this a gateway in
// a crash loop fills TMPDIR with dead sockets (user-pains.md, go-plugin
// row 8).
//
// The paths stay short: macOS limits a socket path to 104 bytes, and its
// TMPDIR alone is about 50.

// ownerFile, in a process's socket directory, holds "PID START": the
// process's identity across pid reuse (shim.ProcInfo).
const ownerFile = "owner"

// youngDir is how long a directory without an owner file is left alone:
// another process may be between making it and writing the file.
const youngDir = time.Minute

var sockets struct {
	mu  sync.Mutex
	dir string
}

// SocketDir returns this process's socket directory, made (0700) on
// first use, or again if someone removed it, after removing the
// directories of processes that are gone. It fails when the per-user
// directory is not the user's own (not a directory, another owner, open
// to others): then sockets go to TMPDIR as before, and the error says so.
func SocketDir() (string, error) {
	sockets.mu.Lock()
	defer sockets.mu.Unlock()
	if sockets.dir != "" {
		if _, err := os.Stat(filepath.Join(sockets.dir, ownerFile)); err == nil {
			return sockets.dir, nil
		}
	}
	base := filepath.Join(os.TempDir(), "flowgate-"+strconv.Itoa(os.Getuid()))
	if err := privateDir(base); err != nil {
		return "", err
	}
	me, err := self()
	if err != nil {
		return "", fmt.Errorf("identify the gateway process for its socket directory: %w", err)
	}
	sweepSockets(base, me)
	dir := filepath.Join(base, strconv.Itoa(me.PID))
	_ = os.RemoveAll(dir) // a process gone, whose pid this one now has
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("make the plugin socket directory %s: %w", dir, err)
	}
	owner := fmt.Sprintf("%d %d\n", me.PID, me.StartTime)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
		return "", fmt.Errorf("write the owner of the plugin socket directory %s: %w", dir, err)
	}
	sockets.dir = dir
	return dir, nil
}

// privateDir makes base, 0700, unless it exists; then it must be a
// directory (not a link) of this user that no one else can enter.
func privateDir(base string) error {
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make the plugin socket directory %s (set TMPDIR to a writable directory): %w", base, err)
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return fmt.Errorf("plugin socket directory %s: %w", base, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("plugin socket directory %s is not a directory: remove it, or set TMPDIR elsewhere", base)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("plugin socket directory %s belongs to another user: remove it, or set TMPDIR elsewhere", base)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("plugin socket directory %s is open to other users (mode %v): chmod 700 it, or remove it", base, fi.Mode().Perm())
	}
	return nil
}

// self is this process's identity.
func self() (shim.ProcInfo, error) {
	pid := os.Getpid()
	start, err := shim.StartTime(pid)
	return shim.ProcInfo{PID: pid, StartTime: start}, err
}

// sweepSockets removes the socket directories under base whose process
// is gone (or whose pid another process now has); me's own is left.
func sweepSockets(base string, me shim.ProcInfo) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || !e.IsDir() {
			continue // not a process's directory
		}
		dir := filepath.Join(base, e.Name())
		owner, ok := readOwner(dir)
		if !ok {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) < youngDir {
				continue
			}
		} else if owner == me || shim.Alive(owner) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// readOwner reads dir's owner file; ok is false when there is none or it
// does not parse.
func readOwner(dir string) (shim.ProcInfo, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return shim.ProcInfo{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return shim.ProcInfo{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return shim.ProcInfo{}, false
	}
	return shim.ProcInfo{PID: pid, StartTime: start}, true
}
