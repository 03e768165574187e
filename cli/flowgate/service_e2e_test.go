package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// requireUserSystemd skips the test unless systemd runs this machine and
// a user manager answers, and unless a flowgate user unit is installed
// already (the test must not replace someone's service).
func requireUserSystemd(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		t.Skip("systemd is not running here (no /run/systemd/system): the service test needs it; the generated unit is checked by host/service's tests")
	}
	out, _ := exec.Command("systemctl", "--user", "is-system-running").Output()
	if s := strings.TrimSpace(string(out)); s != "running" && s != "degraded" {
		t.Skipf("no systemd user manager answers here (systemctl --user is-system-running: %q): log in with a user session to run this test", s)
	}
	if home, err := os.UserHomeDir(); err == nil {
		if _, err := os.Stat(filepath.Join(home, ".config/systemd/user/flowgate.service")); err == nil {
			t.Skip("a flowgate user service is installed already; this test would replace it")
		}
	}
}

// A task started by the gateway service keeps running when the service
// is stopped (KillMode=process): systemctl stop ends the gateway only.
func TestTaskSurvivesServiceStop(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with systemd")
	}
	requireUserSystemd(t)
	bin := buildFlowgate(t)
	home, work, _ := e2eDirs(t)
	flowgate(t, bin, "--home", home, "gateway", "install-service", "--user")
	t.Cleanup(func() { flowgate(t, bin, "--home", home, "gateway", "uninstall-service", "--user") })

	c, err := gateway.Dial(home, 20*time.Second)
	require.NoError(t, err)
	ctx := context.Background()
	task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "svc", Spec: sdk.TaskSpec{Cwd: work, Shell: "sleep 300"}})
	require.NoError(t, err)
	polltest.Until(t, "", func() (bool, string) {
		task, err = c.ResolveTask(ctx, task.ID)
		require.NoError(t, err)
		return task.ShimPID != 0 && task.Status == sdk.TaskRunning, fmt.Sprintf("the task did not start: %+v", task)
	}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
	c.Close()
	sh := shim.ProcInfo{PID: task.ShimPID, StartTime: task.ShimStartTime}
	t.Cleanup(func() { _ = shim.SignalGroup(sh.PID, 9) })

	out, err := exec.Command("systemctl", "--user", "stop", "flowgate.service").CombinedOutput()
	require.NoError(t, err, "systemctl --user stop: %s", out)
	out, _ = exec.Command("systemctl", "--user", "is-active", "flowgate.service").Output()
	require.Equal(t, "inactive", strings.TrimSpace(string(out)), "the gateway stopped")
	require.True(t, shim.Alive(sh), "the task's shim survived the stop of the gateway's unit")
}
