package cli_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// --dry-run shows the service file for this binary, home and config and
// the commands that would load it, and changes nothing.
func TestInstallServiceDryRun(t *testing.T) { // not parallel: it sets $HOME
	if runtime.GOOS != "linux" {
		t.Skip("checks the systemd unit; host/service's tests check the launchd plist on every platform")
	}
	home := shortHome(t)
	userHome := t.TempDir()
	t.Setenv("HOME", userHome)
	code, out, errOut := run(t, home, "gateway", "install-service", "--user", "--dry-run", "--config", "/etc/fg.yaml")
	require.Equal(t, 0, code, errOut)
	unit := filepath.Join(userHome, ".config/systemd/user/flowgate.service")
	require.Contains(t, out, "write "+unit+":\n[Unit]\n")
	require.Contains(t, out, "\nKillMode=process\n")
	require.Contains(t, out, `"--home" "`+home+`" "--config" "/etc/fg.yaml"`)
	require.Contains(t, out, "run: systemctl --user enable --now flowgate.service\n")
	require.NoFileExists(t, unit)

	code, out, errOut = run(t, home, "gateway", "uninstall-service", "--user", "--dry-run")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "run: systemctl --user disable --now flowgate.service\nremove "+unit+"\nrun: systemctl --user daemon-reload\n", out)
	_, err := os.Stat(unit)
	require.ErrorIs(t, err, os.ErrNotExist)
}
