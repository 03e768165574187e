package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

// ErrNoGateway means nothing listens on the gateway socket: the socket file
// is missing or stale. A command that gets it may open the store itself
// (OpenLocal) instead.
var ErrNoGateway = errors.New("no gateway is running")

// probeTimeout bounds how long finding out whether a gateway answers takes.
const probeTimeout = time.Second

// maxSocketPath is the longest socket path the OS accepts, in bytes.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Listen listens on the unix socket sockPath for the gateway's API and
// makes the socket file mode 0600. A stale socket file (one nothing
// answers on, left by a gateway that died) is removed first. Listen
// refuses, naming the path, when something already answers on sockPath,
// when sockPath exists but is not a socket, and when the path is too long
// for a unix socket. Closing the listener removes the socket file.
//
// Two processes must not call Listen on the same path at once (each could
// remove the other's fresh socket as stale); the gateway holds the store's
// file lock while it does. The socket is briefly open to the umask's mode
// before the chmod, which the home directory's 0700 covers.
func Listen(sockPath string) (net.Listener, error) {
	if err := checkSocketPath(sockPath); err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("unix", sockPath, probeTimeout)
	switch {
	case err == nil:
		conn.Close()
		return nil, fmt.Errorf("a gateway already listens on %s; stop it before starting another", sockPath)
	case errors.Is(err, syscall.ECONNREFUSED):
		if err := removeStaleSocket(sockPath); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("check gateway socket %s: %w", sockPath, err)
	}
	l, err := net.Listen("unix", sockPath)
	if err != nil {
		return nil, fmt.Errorf("listen on gateway socket %s: %w", sockPath, err)
	}
	if err := os.Chmod(sockPath, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("make gateway socket %s private: %w", sockPath, err)
	}
	return l, nil
}

// removeStaleSocket removes the socket file at path, refusing to remove
// anything that is not a socket.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check gateway socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s is in the gateway socket's place but is not a socket; move it away", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale gateway socket %s: %w", path, err)
	}
	return nil
}

// checkSocketPath refuses a path the OS cannot bind or dial.
func checkSocketPath(path string) error {
	switch {
	case path == "":
		return errors.New("gateway socket path is empty")
	case len(path) > maxSocketPath:
		return fmt.Errorf("gateway socket path %s is %d bytes, more than the %d a unix socket allows; use a shorter home directory", path, len(path), maxSocketPath)
	}
	return nil
}

// noListener reports whether a dial error means nothing listens: the
// socket file is missing, or nobody accepts on it.
func noListener(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR)
}
