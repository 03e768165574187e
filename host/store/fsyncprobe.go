package store

import (
	"fmt"
	"os"
	"time"
)

// ProbeFsync measures how many durable 4 KiB overwrites per second the
// filesystem under dir sustains: it rewrites offset 0 of a temporary file
// and syncs its data (fdatasync on Linux) in a loop for about d, then
// removes the file. That rate bounds any store that syncs once per commit,
// so benchmarks report their throughput as a multiple of it. It returns an
// error if d is not positive or the file cannot be created, written or
// synced.
func ProbeFsync(dir string, d time.Duration) (opsPerSec float64, err error) {
	if d <= 0 {
		return 0, fmt.Errorf("store: ProbeFsync needs a positive duration, got %s", d)
	}
	f, err := os.CreateTemp(dir, ".fsync-probe-*")
	if err != nil {
		return 0, fmt.Errorf("store: fsync probe: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("store: fsync probe: %w", cerr)
		}
		os.Remove(f.Name())
	}()

	buf := make([]byte, 4096)
	// The first write allocates the block; only overwrites are timed.
	if err := overwrite(f, buf); err != nil {
		return 0, err
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if err := overwrite(f, buf); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// overwrite writes buf at offset 0 of f and syncs its data.
func overwrite(f *os.File, buf []byte) error {
	if _, err := f.WriteAt(buf, 0); err != nil {
		return fmt.Errorf("store: fsync probe: %w", err)
	}
	if err := datasync(f); err != nil {
		return fmt.Errorf("store: fsync probe: sync %s: %w", f.Name(), err)
	}
	return nil
}
