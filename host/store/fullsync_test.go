package store

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFullSync checks macOS's sync logic with fakes for F_FULLFSYNC and
// fsync: the full sync is the one used, interrupted calls are repeated,
// and fsync stands in only where the file system lacks F_FULLFSYNC.
func TestFullSync(t *testing.T) {
	t.Parallel()
	eio := errors.New("input/output error")
	for _, tc := range []struct {
		name      string
		full      []error // what successive F_FULLFSYNC calls return
		wantErr   error
		wantFsync bool
	}{
		{name: "ok", full: []error{nil}},
		{name: "interrupted", full: []error{syscall.EINTR, syscall.EINTR, nil}},
		{name: "unsupported", full: []error{syscall.ENOTSUP}, wantFsync: true},
		{name: "not a regular file", full: []error{syscall.ENOTTY}, wantFsync: true},
		{name: "io error", full: []error{eio}, wantErr: eio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls, fsyncs := 0, 0
			err := fullSync(
				func() error { calls++; return tc.full[calls-1] },
				func() error { fsyncs++; return nil },
			)
			require.ErrorIs(t, err, tc.wantErr)
			require.Equal(t, len(tc.full), calls)
			require.Equal(t, tc.wantFsync, fsyncs == 1, "fsync used")
		})
	}
}
