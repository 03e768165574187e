package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTaskEnvironmentIsTheSameWithOrWithoutGateway runs the same task
// with no gateway (the command hosts one) and through a gateway daemon
// whose environment differs from the caller's: the task sees the same
// environment both times, and neither side's other variables leak in
// unless --inherit-env asks for the caller's.
func TestTaskEnvironmentIsTheSameWithOrWithoutGateway(t *testing.T) {
	t.Parallel()
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "LANG=C.UTF-8", "TZ=UTC", "USER=tester"}
	caller := append(slices.Clone(base), "CALLER_SECRET=from-the-caller")
	daemon := append(slices.Clone(base), "GATEWAY_SECRET=from-the-gateway")
	printEnv := []string{"--", "sh", "-c", `env | grep -v '^FLOWGATE_\(TASK_ID\|FLOW_ID\|ATTEMPT\|PROGRESS\)=' | sort`}
	run := func(flags ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(append([]string{"--home", home, "tasks", "run"}, flags...), printEnv...)...)
		cmd.Env, cmd.Dir = caller, work
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		return string(out)
	}
	alone, aloneInherit := run(), run("--inherit-env")
	g := startGatewayEnv(t, bin, home, logf, daemon)
	defer g.kill(t)
	withGateway, withGatewayInherit := run(), run("--inherit-env")

	require.Equal(t, alone, withGateway, "the same task gets the same environment with or without a gateway")
	require.Contains(t, alone, "TZ=UTC\n")
	require.Contains(t, alone, "USER=tester\n")
	require.NotContains(t, alone, "SECRET")

	require.Equal(t, aloneInherit, withGatewayInherit)
	require.Contains(t, aloneInherit, "CALLER_SECRET=from-the-caller\n", "--inherit-env sends the caller's environment")
	require.NotContains(t, aloneInherit, "GATEWAY_SECRET", "the gateway's own environment never reaches a task")
}

// TestSecretEnvIsNeverStored passes a secret through a gateway daemon with
// --secret-env, from the environment and from a file, and looks for its
// bytes in the store file, a backup and every file under the home.
func TestSecretEnvIsNeverStored(t *testing.T) {
	t.Parallel()
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	const fromEnv, fromFile, plain = "s3cret-from-env-4f9a", "s3cret-from-file-b7c2", "plain-value-91d3"
	secretFile := filepath.Join(work, "token")
	require.NoError(t, os.WriteFile(secretFile, []byte(fromFile+"\n"), 0o600))
	g := startGateway(t, bin, home, logf)
	defer g.kill(t)
	env := append(os.Environ(), "API_TOKEN="+fromEnv)
	// The task proves it got the values without printing them: its
	// output is kept in the record.
	out := flowgateEnv(t, env, bin, "--home", home, "tasks", "run", "--idempotency-key", "secret", "--secret-env", "API_TOKEN", "--secret-env", "FILE_TOKEN=@"+secretFile,
		"--env", "PLAIN="+plain, "--", "sh", "-c", `printf %s "$API_TOKEN $FILE_TOKEN $PLAIN" | sha256sum`)
	sum := sha256.Sum256([]byte(fromEnv + " " + fromFile + " " + plain))
	require.Contains(t, out, hex.EncodeToString(sum[:]), "the secrets reach the task")

	out = flowgateEnv(t, env, bin, "--home", home, "tasks", "show", "secret")
	require.Contains(t, out, "PLAIN=(redacted)")
	require.Contains(t, out, "API_TOKEN FILE_TOKEN (values never stored)")
	out = flowgateEnv(t, env, bin, "--home", home, "tasks", "show", "secret", "--json")
	require.Contains(t, out, `"PLAIN": "(redacted)"`)
	require.NotContains(t, out, plain)
	out = flowgateEnv(t, env, bin, "--home", home, "tasks", "show", "secret", "--json", "--show-env")
	require.Contains(t, out, plain, "--show-env shows plain --env values")

	backup := filepath.Join(work, "backup.db")
	flowgateEnv(t, env, bin, "--home", home, "backup", backup)
	var looked []string
	for _, root := range []string{home, backup} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			for _, secret := range []string{fromEnv, fromFile} {
				require.False(t, bytes.Contains(b, []byte(secret)), "secret %s found in %s", secret, path)
			}
			looked = append(looked, filepath.Base(path))
			return nil
		}))
	}
	require.Contains(t, looked, "flowgate.db")
	require.Contains(t, looked, "record", "the walk read an attempt's record")
	require.Contains(t, looked, "backup.db")
}
