package pluginclient

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// hostListener is the unix socket one plugin instance's Host is served
// on, where only the gateway's user can reach it.
type hostListener struct {
	net.Listener
	// path is the socket's file; dir is the directory made for it alone,
	// or "" when the socket lies in the gateway's socket directory.
	path, dir string
}

// listenHost listens on a new socket in socketDir, a directory only the
// gateway's user can enter; with socketDir "", in a new 0700 directory
// under os.TempDir. The path stays short (a unix socket path is limited
// to about 100 bytes), as go-plugin's own sockets are.
func listenHost(socketDir string) (*hostListener, error) {
	l := &hostListener{}
	if socketDir == "" {
		dir, err := os.MkdirTemp("", "flowgate-host-")
		if err != nil {
			return nil, fmt.Errorf("make a directory for the controller plugin's host socket under %s (set TMPDIR to a writable directory): %w", os.TempDir(), err)
		}
		l.dir, l.path = dir, filepath.Join(dir, "host.sock")
	} else {
		// A unique name, as go-plugin makes its own: a file created and
		// removed, whose name the socket then takes.
		f, err := os.CreateTemp(socketDir, "host-*.sock")
		if err != nil {
			return nil, fmt.Errorf("name the controller plugin's host socket in %s: %w", socketDir, err)
		}
		l.path = f.Name()
		_ = f.Close()
		_ = os.Remove(l.path)
	}
	ln, err := net.Listen("unix", l.path)
	if err != nil {
		l.removeFiles()
		return nil, fmt.Errorf("listen on the controller plugin's host socket %s (a long TMPDIR can exceed the unix socket path limit; set a shorter one): %w", l.path, err)
	}
	l.Listener = ln
	return l, nil
}

// target is the socket's gRPC target, as SetupRequest.host_address
// carries it.
func (l *hostListener) target() string {
	return "unix://" + l.Addr().String()
}

// remove closes the socket and deletes its file (and its directory).
func (l *hostListener) remove() {
	_ = l.Close()
	l.removeFiles()
}

func (l *hostListener) removeFiles() {
	_ = os.Remove(l.path)
	if l.dir != "" {
		_ = os.RemoveAll(l.dir)
	}
}
