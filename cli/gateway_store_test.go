package cli

import (
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/stretchr/testify/require"
)

// `gateway status` says whether the store takes writes and, when it does
// not, that the disk is full, how long it has failed and what to do.
func TestGatewayStatusStoreLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "writable", writeLine("store", api.WriteHealth{Writable: true}))

	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	line := writeLine("store", api.WriteHealth{DiskFull: true, Failures: 7, LastError: "write flowgate.db: no space left on device", LastErrorAt: at.Add(time.Minute), LastWriteAt: at})
	require.Contains(t, line, "store not writable: disk full; free space on its disk and writes resume by themselves")
	require.Contains(t, line, "7 writes failed in a row, the last at 2026-12-01T03:01:00Z: write flowgate.db: no space left on device")
	require.Contains(t, line, "last write that succeeded: 2026-12-01T03:00:00Z")
	require.Contains(t, writeLine("store", api.WriteHealth{LastError: "input/output error"}), "store not writable: input/output error")
	require.Contains(t, writeLine("task files", api.WriteHealth{DiskFull: true}), "task files not writable: disk full")
}
