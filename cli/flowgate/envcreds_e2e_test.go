package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/stretchr/testify/require"
)

// TestGatewayCredentialsReachNoTaskOrHook starts a gateway daemon whose
// environment holds FLOWGATE_ETCD_PASSWORD and another FLOWGATE_* setting
// and has it run a task (also with --inherit-env, from a caller that holds
// a password too), the task's --on-finish command and a cron job's
// --notify-command, each dumping its environment: none has a gateway
// setting, and each has the variables its contract names.
func TestGatewayCredentialsReachNoTaskOrHook(t *testing.T) {
	t.Parallel()
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	const password = "etcd-pa55word-7c1e"
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "LANG=C.UTF-8", "TZ=UTC", "USER=tester"}
	daemon := append(slices.Clone(base), "FLOWGATE_ETCD_PASSWORD="+password, "FLOWGATE_GATEWAY_USERS=root,65534", "FLOWGATE_HOME="+home)
	g := startGatewayEnv(t, bin, home, logf, daemon)
	defer g.kill(t)
	caller := append(slices.Clone(base), "FLOWGATE_ETCD_PASSWORD=caller-"+password, "CALLER_VAR=kept")
	finish, cronEnv := filepath.Join(work, "on-finish.env"), filepath.Join(work, "cron.env")

	task := flowgateEnv(t, caller, bin, "--home", home, "tasks", "run", "--on-finish", "env > "+finish, "--", "env")
	inherited := flowgateEnv(t, caller, bin, "--home", home, "tasks", "run", "--inherit-env", "--", "env")
	flowgateEnv(t, caller, bin, "--home", home, "cron", "add", "--name", "dump", "--every", "1h", "--command", "true", "--notify-command", "env > "+cronEnv)
	flowgateEnv(t, caller, bin, "--home", home, "cron", "run", "dump", "--wait")
	read := func(path string) string {
		t.Helper()
		var b []byte
		polltest.Until(t, path+" written", func() bool {
			var err error
			b, err = os.ReadFile(path)
			return err == nil && len(b) > 0
		}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
		return string(b)
	}
	dumps := map[string]string{"task": task, "task with --inherit-env": inherited, "on-finish command": read(finish), "cron notify command": read(cronEnv)}
	for what, env := range dumps {
		require.NotContains(t, env, password, "%s got the gateway's etcd password", what)
		require.NotContains(t, env, "FLOWGATE_ETCD_PASSWORD", what)
		require.NotContains(t, env, "FLOWGATE_GATEWAY_USERS", "%s got a FLOWGATE_* setting of the gateway's", what)
		for _, want := range []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "LANG=C.UTF-8", "TZ=UTC", "USER=tester", "FLOWGATE_HOME=" + home} {
			require.Contains(t, env, want+"\n", what)
		}
	}
	for _, env := range []string{task, inherited} {
		require.Contains(t, env, "FLOWGATE_TASK_ID=")
		require.Contains(t, env, "FLOWGATE_FLOW_ID=")
		require.Contains(t, env, "FLOWGATE_ATTEMPT=1\n")
		require.Contains(t, env, "FLOWGATE_PROGRESS=")
	}
	require.Contains(t, inherited, "CALLER_VAR=kept\n", "--inherit-env still sends the caller's own variables")
	require.Contains(t, dumps["on-finish command"], "FLOWGATE_TASK_STATUS=succeeded\n")
	require.Contains(t, dumps["on-finish command"], "FLOWGATE_NOTICE_KEY=")
	require.Contains(t, dumps["cron notify command"], "FLOWGATE_CRON_RUN_ID=")
	require.Contains(t, dumps["cron notify command"], "FLOWGATE_CRON_JOB_NAME=dump\n")
}
