package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/sdk/filetrust"
)

// GatewayUsersEnv names the environment variable that lists, comma
// separated, the users (names or uids) besides the current one whose
// gateway a client may talk to: a gateway run by a service account, say.
// Unset means the current user only.
const GatewayUsersEnv = "FLOWGATE_GATEWAY_USERS"

// ErrUntrustedGateway means the gateway socket, or the process listening
// on it, belongs to a user the client does not trust. Nothing was sent.
var ErrUntrustedGateway = errors.New("untrusted gateway socket")

// trustedUIDs returns the current uid and those GatewayUsersEnv names.
func trustedUIDs() (map[int]bool, error) {
	uids := map[int]bool{os.Getuid(): true}
	for name := range strings.SplitSeq(os.Getenv(GatewayUsersEnv), ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if uid, err := strconv.Atoi(name); err == nil {
			uids[uid] = true
			continue
		}
		u, err := user.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("%s names user %q: %w; name an existing user or uid", GatewayUsersEnv, name, err)
		}
		uid, err := strconv.Atoi(u.Uid)
		if err != nil {
			return nil, fmt.Errorf("%s names user %q, whose uid %q is not a number", GatewayUsersEnv, name, u.Uid)
		}
		uids[uid] = true
	}
	return uids, nil
}

// checkSocketFile refuses a gateway socket file, or a home holding it,
// owned by an untrusted user or writable by group or others. A missing
// file passes: dialing it then finds no gateway.
func checkSocketFile(path string, trusted map[int]bool) error {
	dir := filepath.Dir(path)
	if fi, err := os.Lstat(dir); err == nil {
		if err := home.Owned(dir, fi, trusted); err != nil {
			return fmt.Errorf("%w: %w", ErrUntrustedGateway, err)
		}
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check gateway socket %s: %w", path, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("check gateway socket %s: cannot tell who owns it on this system", path)
	}
	if !trusted[int(st.Uid)] {
		return fmt.Errorf("%w: %s is owned by %s, not by you (%s) or a user in %s: it may not be your gateway, so nothing was sent to it; "+
			"remove it (rm %s) and start your own with flowgate gateway, or add that user to %s if you trust it",
			ErrUntrustedGateway, path, filetrust.UserName(int(st.Uid)), filetrust.UserName(os.Getuid()), GatewayUsersEnv, path, GatewayUsersEnv)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by group or others (mode %04o), so anyone could connect in your name; stop the gateway, remove the socket and start it again (it makes the socket 0600)",
			ErrUntrustedGateway, path, fi.Mode().Perm())
	}
	return nil
}

// checkPeer refuses a connection whose listening process (readPeerCred)
// runs as a user not in trusted.
func checkPeer(conn net.Conn, path string, trusted map[int]bool) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("%w: %s is not a unix socket connection", ErrUntrustedGateway, path)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("read the gateway's credentials on %s: %w", path, err)
	}
	var cred peerCred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = readPeerCred(int(fd))
	}); err != nil {
		return fmt.Errorf("read the gateway's credentials on %s: %w", path, err)
	}
	if credErr != nil {
		return fmt.Errorf("read the gateway's credentials on %s: %w", path, credErr)
	}
	if !trusted[cred.uid] {
		return fmt.Errorf("%w: the process listening on %s (pid %d) runs as %s, not as you (%s) or a user in %s; nothing was sent to it. "+
			"Stop that process, remove the socket and start your own gateway, or add that user to %s if you trust it",
			ErrUntrustedGateway, path, cred.pid, filetrust.UserName(cred.uid), filetrust.UserName(os.Getuid()), GatewayUsersEnv, GatewayUsersEnv)
	}
	return nil
}
