package sdk

import (
	"errors"
	"syscall"
)

// processStderr writes to the process's standard error file descriptor,
// whatever os.Stderr points at. Serve points os.Stderr at a pipe that
// reaches the gateway as raw output; logs go to the real standard error,
// which the gateway reads as hclog JSON lines and re-logs under the
// plugin's name, so a logger made after Serve started still logs.
type processStderr struct{}

// Write writes p whole, retrying short and interrupted writes.
func (processStderr) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Write(syscall.Stderr, p[n:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}
