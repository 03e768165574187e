package shell_test

import (
	"testing"

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
