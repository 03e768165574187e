package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/schedule"
)

// runJob runs job now through c and waits until that run has ended, so
// the next one is not skipped as an overlap.
func runJob(t *testing.T, c api.Client, job apitype.CronJob) {
	t.Helper()
	ctx := context.Background()
	run, err := c.RunJobNow(ctx, job.ID, "")
	require.NoError(t, err)
	polltest.Until(t, "run "+run.ID+" of "+job.Name+" to end", func() bool {
		runs, err := c.JobRuns(ctx, job.ID, 20)
		require.NoError(t, err)
		for _, r := range runs {
			if r.ID == run.ID {
				return !r.EndedAt.IsZero()
			}
		}
		return false
	})
}

// jobFindings are the audit's cron_job_failing findings, by job id.
func jobFindings(t *testing.T, c api.Client) map[string]apitype.AuditFinding {
	t.Helper()
	rep, err := c.Audit(context.Background())
	require.NoError(t, err)
	out := map[string]apitype.AuditFinding{}
	for _, f := range rep.Findings {
		if f.Code == apitype.AuditCode(audit.JobFailing) {
			out[f.Token] = f
		}
	}
	return out
}

// A gateway's /metrics counts cron runs under their job's name, and its
// audit reports a job that keeps failing: a warning from its third
// failure in a row, an error once the scheduler has disabled it for
// failing; a job that succeeds is neither.
func TestCronRunsAreCountedPerJobAndAFailingJobIsAFinding(t *testing.T) {
	t.Parallel()
	g, c, _ := startHTTPGateway(t, gateway.HTTPConfig{Addr: "127.0.0.1:0"})
	ctx := context.Background()
	far := apitype.ScheduleFlags{Every: "24h"} // only the runs started by hand
	breaks, err := c.AddJob(ctx, apitype.CronJobInput{Name: "breaks", Schedule: far, Command: "echo boom >&2; exit 3"})
	require.NoError(t, err)
	fine, err := c.AddJob(ctx, apitype.CronJobInput{Name: "fine", Schedule: far, Command: "true"})
	require.NoError(t, err)

	runJob(t, c, fine)
	for range 2 {
		runJob(t, c, breaks)
	}
	require.Empty(t, jobFindings(t, c), "two failures in a row are not yet a finding")
	runJob(t, c, breaks)
	f, ok := jobFindings(t, c)[breaks.ID]
	require.True(t, ok, "three failures in a row are")
	require.Equal(t, apitype.AuditWarn, f.Severity)
	require.Equal(t, apitype.AuditKindFlow, f.Kind)
	require.Contains(t, f.Detail, `cron job "breaks" failed its last 3 runs in a row`)
	resp, err := http.Get(fmt.Sprintf("http://%s/audit", g.HTTPAddr()))
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(page), `<a href="/cron/`+breaks.ID+`">`, "the run center's audit links the job")

	fams := scrape(t, http.DefaultClient, fmt.Sprintf("http://%s/metrics", g.HTTPAddr()))
	runs := map[string]int{}
	for _, m := range fams["flowgate_cron_runs_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		runs[labels["job"]+" "+labels["outcome"]] = int(m.GetCounter().GetValue())
	}
	require.Equal(t, map[string]int{"breaks error": 3, "fine ok": 1}, runs, "each job's outcomes under its name")

	for range schedule.DisableAfter - 3 {
		runJob(t, c, breaks)
	}
	j, err := c.GetJob(ctx, breaks.ID)
	require.NoError(t, err)
	require.False(t, j.Enabled, "the scheduler disabled the job")
	f = jobFindings(t, c)[breaks.ID]
	require.Equal(t, apitype.AuditError, f.Severity, "a job disabled for failing no longer runs: %s", f.Detail)
	require.Contains(t, f.Detail, "was disabled after failing 10 runs in a row")
	require.NotContains(t, jobFindings(t, c), fine.ID)
}
