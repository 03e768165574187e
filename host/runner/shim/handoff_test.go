package shim_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// An attempt the gateway withdrew before its shim claimed it never runs:
// the shim that comes later finds the withdrawal and starts nothing.
func TestWithdrawnAttemptNeverRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, shim.Prepare(dir))
	claimed, err := shim.Claimed(dir)
	require.NoError(t, err)
	require.False(t, claimed, "a prepared record is not a claim")
	withdrawn, err := shim.Withdraw(dir)
	require.NoError(t, err)
	require.True(t, withdrawn)
	claimed, err = shim.Claimed(dir)
	require.NoError(t, err)
	require.False(t, claimed, "a withdrawn attempt is not claimed")
	again, err := shim.Withdraw(dir)
	require.NoError(t, err)
	require.True(t, again, "withdrawing twice is fine")

	entry, err := shim.SpecEntry(shim.Spec{Shell: "touch " + filepath.Join(dir, "ran")})
	require.NoError(t, err)
	a := launch(t, dir, entry)
	st := a.wait(t)
	require.Equal(t, 0, a.state.ExitCode())
	require.Equal(t, shim.ReasonWithdrawn, st.Reason)
	require.NoFileExists(t, filepath.Join(dir, "ran"))
	require.NoFileExists(t, filepath.Join(dir, shim.StdoutFile))

	// And a claimed attempt cannot be withdrawn.
	b := start(t, shim.Spec{Shell: "true"})
	b.wait(t)
	withdrawn, err = shim.Withdraw(b.dir)
	require.NoError(t, err)
	require.False(t, withdrawn)
}

// A spec cut short on the pipe (the gateway died handing it over) claims
// nothing and runs nothing, so the next gateway queues the attempt again.
func TestCutHandoffRunsNothing(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"cut":   "100\n{\"shell\":\"touch ran\"",
		"empty": "",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestShimHelper$")
			cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
			cmd.Stdin = strings.NewReader(in) // exec hands it over on a pipe
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, 3, ee.ExitCode())
			claimed, err := shim.Claimed(dir)
			require.NoError(t, err)
			require.False(t, claimed)
			rec, err := shim.ReadRecord(dir)
			require.NoError(t, err)
			require.Nil(t, rec.Status)
		})
	}
}
