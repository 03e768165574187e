package pluginclient

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// hostListener is the unix socket one plugin instance's Host is served
// on, in a directory of its own that only the gateway's user can enter.
type hostListener struct {
	net.Listener
	dir string
}

// listenHost makes a new 0700 directory under os.TempDir and listens on
// host.sock in it. The path stays short (a unix socket path is limited to
// about 100 bytes), as go-plugin's own sockets are.
func listenHost() (*hostListener, error) {
	dir, err := os.MkdirTemp("", "flowgate-host-")
	if err != nil {
		return nil, fmt.Errorf("make a directory for the controller plugin's host socket under %s (set TMPDIR to a writable directory): %w", os.TempDir(), err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "host.sock"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("listen on the controller plugin's host socket in %s (a long TMPDIR can exceed the unix socket path limit; set a shorter one): %w", dir, err)
	}
	return &hostListener{Listener: ln, dir: dir}, nil
}

// target is the socket's gRPC target, as SetupRequest.host_address
// carries it.
func (l *hostListener) target() string {
	return "unix://" + l.Addr().String()
}

// remove closes the socket and deletes its directory.
func (l *hostListener) remove() {
	_ = l.Close()
	_ = os.RemoveAll(l.dir)
}
