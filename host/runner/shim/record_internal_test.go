package shim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A write torn by a crash leaves the record as it was before the write:
// the slots alternate, and a damaged slot is skipped.
func TestRecordSurvivesATornWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := claimRecord(dir, Record{Shim: &ProcInfo{PID: 10}}, true)
	require.NoError(t, err)
	require.NoError(t, w.write(Record{Shim: &ProcInfo{PID: 10}, Child: &ProcInfo{PID: 11}}, false))
	require.NoError(t, w.finish(Status{ExitCode: 3}))
	require.NoError(t, w.close())

	rec, err := ReadRecord(dir)
	require.NoError(t, err)
	require.Equal(t, 3, rec.Status.ExitCode)
	require.Equal(t, 11, rec.Child.PID)

	// The last write (seq 3) went to slot 1: tear it.
	f, err := os.OpenFile(filepath.Join(dir, RecordFile), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("garbage"), slotSize+slotHeader+5)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	rec, err = ReadRecord(dir)
	require.NoError(t, err)
	require.Nil(t, rec.Status, "the torn slot is skipped")
	require.Equal(t, 11, rec.Child.PID, "the slot before it is read")

	// A second shim cannot claim the attempt.
	_, err = claimRecord(dir, Record{Shim: &ProcInfo{PID: 12}}, true)
	require.ErrorIs(t, err, errClaimed)
}

// A status whose error text would overflow a slot is cut to fit.
func TestRecordCutsALongError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := claimRecord(dir, Record{Shim: &ProcInfo{PID: 10}}, true)
	require.NoError(t, err)
	long := make([]byte, 3*slotSize)
	for i := range long {
		long[i] = 'x'
	}
	require.NoError(t, w.finish(Status{ExitCode: 126, Error: string(long)}))
	require.NoError(t, w.close())
	rec, err := ReadRecord(dir)
	require.NoError(t, err)
	st := rec.Status
	require.NotNil(t, st)
	require.Equal(t, 126, st.ExitCode)
	require.Less(t, len(st.Error), slotSize)
}
