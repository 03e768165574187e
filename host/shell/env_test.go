package shell_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/shell"
)

// BaseEnv keeps the five variables every task and hook gets and
// FLOWGATE_HOME, and drops the gateway's other settings and credentials.
func TestBaseEnvKeepsNoGatewayCredential(t *testing.T) {
	t.Parallel()
	got := shell.BaseEnv([]string{
		"PATH=/bin", "HOME=/h", "LANG=C", "TZ=UTC", "USER=u", "FLOWGATE_HOME=/fg",
		"FLOWGATE_ETCD_PASSWORD=secret", "FLOWGATE_GATEWAY_USERS=root", "AWS_SECRET_ACCESS_KEY=x", "NOEQUALS",
	})
	require.Equal(t, []string{"PATH=/bin", "HOME=/h", "LANG=C", "TZ=UTC", "USER=u", "FLOWGATE_HOME=/fg"}, got)
	require.NotNil(t, shell.BaseEnv(nil), "an empty environment, never nil (inherit all)")
}

// A command line of the gateway's (a notify command, the diagnoser) gets
// BaseEnv and what its caller adds, never the gateway's credentials.
func TestCommandGetsTheBaseEnvOnly(t *testing.T) {
	t.Setenv("FLOWGATE_ETCD_PASSWORD", "s3cret-9d2a")
	t.Setenv("FLOWGATE_HOME", "/the/home")
	cmd := shell.Command(t.Context(), "env", time.Second)
	cmd.Env = append(cmd.Env, "FLOWGATE_TASK_ID=t1")
	out, err := cmd.Output()
	require.NoError(t, err)
	require.NotContains(t, string(out), "s3cret-9d2a")
	require.Contains(t, string(out), "FLOWGATE_HOME=/the/home\n")
	require.Contains(t, string(out), "FLOWGATE_TASK_ID=t1\n")
}
