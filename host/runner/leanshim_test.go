package runner_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
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
		p, err := runner.NewShims(exe, nil).Launch("/attempt/dir", nil)
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

// A flowgate-shim built from another version than flowgate is not used:
// tasks run under "flowgate shim", and the gateway says once why, naming
// both versions and what to do. Once the two match again, the lean shim
// is used.
func TestLeanShimOfAnotherVersionIsNotUsed(t *testing.T) {
	t.Parallel()
	bin, out := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\necho \"$(basename \"$0\") $*\" > " + filepath.Join(out, "ran") + "\n"
	exe := filepath.Join(bin, "flowgate")
	require.NoError(t, os.WriteFile(exe, []byte(script), 0o700))
	// A Go executable (this test binary) has build information; the
	// script standing in for flowgate has none: two versions.
	lean := filepath.Join(bin, runner.ShimBinary)
	require.NoError(t, os.Symlink(os.Args[0], lean))
	var logs bytes.Buffer
	shims := runner.NewShims(exe, hclog.New(&hclog.LoggerOptions{Output: &logs}))
	ran := func() string {
		t.Helper()
		p, err := shims.Launch("/attempt/dir", nil)
		require.NoError(t, err)
		_, err = p.Wait()
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(out, "ran"))
		require.NoError(t, err)
		return string(b)
	}

	require.Equal(t, "flowgate shim /attempt/dir\n", ran())
	require.Equal(t, "flowgate shim /attempt/dir\n", ran())
	line := logs.String()
	require.Equal(t, 1, strings.Count(line, "was built from another version"), "logged once: %s", line)
	require.Contains(t, line, "shim_version=\"(devel)")
	require.Contains(t, line, "flowgate_version=\"unknown (no Go build information in the file)\"")
	require.Contains(t, line, "go install github.com/flowgate/flowgate/cli/flowgate-shim@VERSION")

	// The same version (here: the same script) next to flowgate is used.
	require.NoError(t, os.Remove(lean))
	require.NoError(t, os.WriteFile(lean, []byte(script), 0o700))
	require.Equal(t, "flowgate-shim /attempt/dir\n", ran())
}
