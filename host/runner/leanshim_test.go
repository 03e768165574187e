package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
)

// The default launcher starts the lean flowgate-shim found next to the
// executable, and the executable itself as "<exe> shim <dir>" when there
// is none.
func TestDefaultLaunchPrefersTheLeanShim(t *testing.T) {
	t.Parallel()
	for _, lean := range []bool{true, false} {
		bin, out := t.TempDir(), t.TempDir()
		// Each stand-in records its name and arguments.
		script := "#!/bin/sh\necho \"$(basename \"$0\") $*\" > " + filepath.Join(out, "ran") + "\n"
		exe := filepath.Join(bin, "flowgate")
		require.NoError(t, os.WriteFile(exe, []byte(script), 0o700))
		if lean {
			require.NoError(t, os.WriteFile(filepath.Join(bin, runner.ShimBinary), []byte(script), 0o700))
		}
		p, err := runner.LaunchShim(exe, "/attempt/dir", nil)
		require.NoError(t, err)
		_, err = p.Wait()
		require.NoError(t, err)
		want := "flowgate shim /attempt/dir\n"
		if lean {
			want = "flowgate-shim /attempt/dir\n"
		}
		// The stand-in has exited (Wait): what it wrote is all there is.
		b, err := os.ReadFile(filepath.Join(out, "ran"))
		require.NoError(t, err)
		require.Equal(t, want, string(b), "lean=%v", lean)
	}
}
