package cli_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTasksRunSecretEnvBadInput(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	for name, c := range map[string]struct {
		args []string
		says string
	}{
		"value on the command line": {[]string{"--secret-env", "TOKEN=abc"}, "visible to every user in ps"},
		"unset variable":            {[]string{"--secret-env", "FLOWGATE_TEST_NO_SUCH_VAR_X"}, "is not set in this command's environment"},
		"missing file":              {[]string{"--secret-env", "TOKEN=@/no/such/file"}, "/no/such/file"},
		"secret and plain":          {[]string{"--env", "PATH=x", "--secret-env", "PATH"}, "both --env and --secret-env"},
		"given twice":               {[]string{"--secret-env", "PATH", "--secret-env", "PATH"}, "given twice"},
	} {
		code, out, errOut := run(t, home, append(append([]string{"tasks", "run"}, c.args...), "--", "true")...)
		require.Equal(t, 2, code, "%s: %s", name, errOut)
		require.Contains(t, errOut, c.says, name)
		require.Empty(t, out, name)
	}
}

// Without a gateway, tasks run hosts one in-process: a --secret-env value
// still reaches the task and nothing under the home holds it, and --env
// values are redacted by tasks show and tasks list.
func TestTasksRunSecretEnvWithoutGateway(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	const secret, plain = "in-process-s3cret-77e1", "plain-2c4d"
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte(secret), 0o600))
	code, out, errOut := run(t, home, "tasks", "run", "--idempotency-key", "s", "--secret-env", "TOKEN=@"+file, "--env", "PLAIN="+plain,
		"--", "sh", "-c", `test "$TOKEN" = "$(cat `+file+`)" && echo token-ok`)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "token-ok\n", out)

	code, out, _ = run(t, home, "tasks", "show", "s")
	require.Equal(t, 0, code)
	require.Contains(t, out, "PLAIN=(redacted)")
	require.Contains(t, out, "TOKEN (values never stored)")
	code, out, _ = run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"PLAIN": "(redacted)"`)
	require.NotContains(t, out, plain)
	code, out, _ = run(t, home, "tasks", "show", "s", "--show-env")
	require.Equal(t, 0, code)
	require.Contains(t, out, "PLAIN="+plain)

	require.NoError(t, filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.False(t, bytes.Contains(b, []byte(secret)), "secret found in %s", path)
		return nil
	}))
}

// A home others can write to is refused by reading and by running
// commands alike, with the fix in the message; nothing runs.
func TestCommandsRefuseAHomeOthersCanWrite(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	marker := filepath.Join(t.TempDir(), "ran")
	require.NoError(t, os.Chmod(home, 0o777))
	for _, args := range [][]string{
		{"tasks", "list"},
		{"tasks", "run", "--", "touch", marker},
	} {
		code, _, errOut := run(t, home, args...)
		require.Equal(t, 1, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, "writable by group or others (mode 0777)", args)
		require.Contains(t, errOut, "chmod go-w "+home, args)
	}
	require.NoFileExists(t, marker)
}
