package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestConfigDeclaresCronJobs(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `cron:
  - name: ping
    every: 10s
    command: echo pong
  - name: brief
    cron: "0 7 * * 1-5"
    tz: America/New_York
    pipeline: brief.lobster
    args: {market: coffee}
    announce_to: ["http://127.0.0.1:9/brief"]
    failure_alert_after: 2
    failure_alert_to: ["cmd:logger brief failed"]
    notify: state_changes
    notify_to: ["http://127.0.0.1:9/status"]
`)
	fc, err := gateway.LoadConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(filepath.Dir(cfg), "brief.lobster"), fc.Cron[1].Pipeline, "relative to the config file")

	dir, err := os.MkdirTemp("", "fgcron")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	for range 2 { // a restart must not duplicate the declared jobs
		g, err := gateway.New(gateway.Config{Home: dir, File: fc, Launch: testLaunch})
		require.NoError(t, err)
		require.NoError(t, g.Start(context.Background()))
		require.NoError(t, g.Stop(context.Background()))
	}
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	jobs, err := scheduler.NewJobs(eng, scheduler.JobsConfig{}).List(true)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	names := map[string]scheduler.Job{}
	for _, j := range jobs {
		names[j.Name] = j
	}
	require.Equal(t, "echo pong", names["ping"].Payload.Command)
	require.Equal(t, "America/New_York", names["brief"].Schedule.TZ)
	require.Equal(t, []string{"http://127.0.0.1:9/brief"}, names["brief"].Announce)
	require.Equal(t, []string{"cmd:logger brief failed"}, names["brief"].FailureAlert.Dests)
	require.Equal(t, sdk.NotifyStateChanges, names["brief"].Notify)
	require.Equal(t, []string{"http://127.0.0.1:9/status"}, names["brief"].NotifyTo)
}

func TestConfigRefusesBadCronJobs(t *testing.T) {
	t.Parallel()
	for body, says := range map[string]string{
		"cron:\n  - name: x\n    cron: \"61 * * * *\"\n    command: true\n":                               `cron job "x"`,
		"cron:\n  - name: x\n    every: 1m\n    command: a\n  - name: x\n    every: 2m\n    command: b\n": "declared twice",
		"cron:\n  - every: 1m\n    command: true\n":                                                       "cron[0].name",
		"cron:\n  - name: x\n    at: 2030-01-01T00:00:00Z\n    command: true\n":                           "at",
		"cron:\n  - name: x\n    every: 1m\n":                                                             `cron job "x"`,
		"cron:\n  - name: x\n    every: 1m\n    command: true\n    announce_to: [\"ftp://x\"]\n":          "ftp",
	} {
		_, err := gateway.LoadConfig(writeConfig(t, body))
		require.ErrorContains(t, err, says, body)
	}
}

func TestExampleConfigLoads(t *testing.T) {
	t.Parallel()
	fc, err := gateway.LoadConfig("../../examples/gateway.yaml")
	require.NoError(t, err)
	require.Len(t, fc.Cron, 2)
	require.Equal(t, 24*time.Hour, fc.DetachedMaxBudget())
	_, err = os.Stat(fc.Cron[0].Pipeline)
	require.NoError(t, err, "the example's pipeline path resolves next to the config")
}

func TestConfigMaintenanceAndRetention(t *testing.T) {
	t.Parallel()
	fc, err := gateway.LoadConfig(writeConfig(t, "retention:\n  tasks: 48h\n  flows: 72h\nmaintenance:\n  interval: 30s\n  first: 1s\n  grace: 10m\n  compact_share: 0.3\n"))
	require.NoError(t, err)
	mc := fc.MaintenanceConfig("/h")
	require.Equal(t, "/h", mc.Home)
	require.Equal(t, 72*time.Hour, mc.FlowRetention)
	require.Equal(t, 10*time.Minute, mc.Grace)
	require.Equal(t, 0.3, mc.CompactShare)
	require.Equal(t, 30*time.Second, time.Duration(fc.Maintenance.Interval))
	require.Equal(t, gateway.DefaultDetachedMaxBudget, fc.DetachedMaxBudget(), "left out: the default")
	fc, err = gateway.LoadConfig(writeConfig(t, "limits:\n  detached_max_budget: 72h\n"))
	require.NoError(t, err)
	require.Equal(t, 72*time.Hour, fc.DetachedMaxBudget())
	require.Equal(t, gateway.DefaultDetachedNoProgressBudget, fc.DetachedNoProgressBudget(), "left out: the default")
	fc, err = gateway.LoadConfig(writeConfig(t, "limits:\n  detached_no_progress_budget: 0s\n"))
	require.NoError(t, err)
	require.Zero(t, fc.DetachedNoProgressBudget(), "0s is none")
	for body, says := range map[string]string{
		"limits:\n  detached_no_progress_budget: -1h\n": "limits.detached_no_progress_budget must not be negative",
		"retention:\n  flows: -1h\n":                    "retention.flows",
		"limits:\n  detached_max_budget: -1h\n":         "limits.detached_max_budget must not be negative",
		"limits:\n  max_active_flows: -1\n":             "limits.max_active_flows must not be negative",
		"limits:\n  idle_shims: -2\n":                   "limits.idle_shims must be -1 (no idle shims) or more",
		"limits:\n  shim_idle_timeout: -1s\n":           "limits.shim_idle_timeout must not be negative",
		"maintenance:\n  interval: 10ms\n":              "maintenance.interval must be at least 1s",
		"maintenance:\n  grace: -1m\n":                  "maintenance.grace",
		"maintenance:\n  compact_share: 1.5\n":          "maintenance.compact_share",
		"maintenance:\n  every: 1m\n":                   "every",
	} {
		_, err := gateway.LoadConfig(writeConfig(t, body))
		require.ErrorContains(t, err, says, body)
	}
}

func TestConfigFailuresAndDiagnoser(t *testing.T) {
	t.Parallel()
	fc, err := gateway.LoadConfig(writeConfig(t, "failures:\n  agent:\n    billing: [PAYMENT_REQUIRED]\n    startup: []\ndiagnoser:\n  command: diagnose --json\n  timeout: 20s\n  max_output_kib: 8\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"PAYMENT_REQUIRED"}, fc.Failures["agent"].Billing)
	require.NotNil(t, fc.Failures["agent"].Startup, "an empty list turns the default off")
	require.Nil(t, fc.Failures["agent"].Transient, "a list left out keeps the default")
	dc := fc.DiagnoserConfig()
	require.Equal(t, "diagnose --json", dc.Command)
	require.Equal(t, 20*time.Second, dc.Timeout)
	require.Equal(t, 8, dc.MaxOutputKiB)
	for body, says := range map[string]string{
		"failures:\n  agent:\n    billing: ['(oops']\n": `runtime agent: billing pattern "(oops"`,
		"failures:\n  agent:\n    fatal: ['(bad']\n":    `runtime agent: fatal pattern "(bad"`,
		"probe:\n  endpoint: nocolon\n":                 "probe.endpoint",
		"diagnoser:\n  command: d\n  timeout: 5m\n":     "diagnoser.timeout must be between 1s and 1m0s",
		"diagnoser:\n  max_output_kib: -1\n":            "diagnoser.max_output_kib",
	} {
		_, err := gateway.LoadConfig(writeConfig(t, body))
		require.ErrorContains(t, err, says, body)
	}
}
