package cli_test

import (
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
