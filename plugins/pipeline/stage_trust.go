package pipeline

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// trustedStage refuses the executable stage at path when anyone but the
// gateway's user or root controls it: the file, the file it names after
// symbolic links, and the directories holding each must be owned by the
// current user or root and not writable by group or others. A stage runs
// with the gateway's rights, so whoever could rewrite it, or drop a file
// in a stage directory, would run code as the gateway's user. This is the
// rule host/home.Runnable applies to controller plugins; the controller
// keeps its own copy because plugins import sdk and flows only.
func trustedStage(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	for _, p := range []string{filepath.Dir(path), filepath.Dir(real), real} {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: cannot tell who owns it on this system", p)
		}
		if uid := os.Getuid(); int(st.Uid) != uid && st.Uid != 0 {
			owners := "root, the gateway's user"
			if uid != 0 {
				owners = "the gateway's user (" + userName(uid) + ") or root"
			}
			return fmt.Errorf("refused to run it: %s is owned by %s, not by %s, so its owner decides what runs as the gateway; "+
				"if you trust what is in it, run: chown %d %s, else remove it", p, userName(int(st.Uid)), owners, uid, p)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("refused to run it: %s is writable by group or others (mode %04o), so anyone who can write there decides what runs as the gateway; "+
				"run: chmod go-w %s", p, fi.Mode().Perm(), p)
		}
	}
	return nil
}

// userName describes uid as "name (uid N)", or "uid N" when the user
// database does not know it.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
