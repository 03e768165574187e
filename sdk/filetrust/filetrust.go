// Package filetrust decides whether an executable may run with the rights
// of the process that would run it. The gateway applies it to controller
// plugins and plugins_dir, and the pipeline controller to executable
// stages; a controller that runs executables of its own can apply it too.
//
// The rule: the file, the file it names after symbolic links, and the
// directories holding each must be owned by the current user or root, and
// not writable by group or others. Whoever can rewrite the file, or put
// another in its place, decides what runs with the caller's rights: a
// world-writable stages directory would let any user of the machine run
// code as the gateway. System directories such as /usr/bin pass, since
// root owns them.
package filetrust

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Runnable returns nil when path may be run under the package's rule, and
// otherwise an error that names the path, what is wrong, and the command
// that fixes it. A path that does not exist is the error of os.Stat.
func Runnable(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	for _, p := range []string{filepath.Dir(path), filepath.Dir(real), real} {
		if err := Trusted(p); err != nil {
			return err
		}
	}
	return nil
}

// Trusted is Runnable's check of one file or directory p: owned by the
// current user or root, not writable by group or others. It is how a
// directory of executables (plugins_dir) is checked as a whole.
func Trusted(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot tell who owns it on this system", p)
	}
	if uid := os.Getuid(); int(st.Uid) != uid && st.Uid != 0 {
		owners := "root"
		if uid != 0 {
			owners = "you (" + UserName(uid) + ") or root"
		}
		return fmt.Errorf("%s is owned by %s, not by %s, so its owner decides what flowgate runs as you; "+
			"if you trust what is in it, run: chown %d %s, else remove it", p, UserName(int(st.Uid)), owners, uid, p)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o), so anyone who can write there decides what flowgate runs as you; "+
			"run: chmod go-w %s", p, fi.Mode().Perm(), p)
	}
	return nil
}

// UserName describes uid as "name (uid N)", or "uid N" when the user
// database does not know it.
func UserName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
