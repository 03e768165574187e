package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// loginAs opens the run center at base in ctx's browser and logs in with
// token.
func loginAs(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Click(chromedp.CSS(`.login button`)),
		chromedp.WaitVisible(chromedp.CSS(`#flows`)),
	))
}

// TestRunCenterContinueInChromium drives Continue in headless Chromium
// against a real gateway binary: a 3-step pipeline whose middle step
// fails offers Continue; its confirmation page, sent, leads to the
// successor's page, which runs (the step succeeds the second time) to
// succeeded, and the source's history says who continued it.
func TestRunCenterContinueInChromium(t *testing.T) {
	exe := chromium(t)
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := startRunCenter(t, bin, home, work, logf, "http:\n  addr: 127.0.0.1:0\n  tokens:\n    - name: alice\n      token: alice-token\n")

	flag := filepath.Join(work, "fixed")
	wf := filepath.Join(work, "three.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: three
steps:
  - id: fetch
    run: echo fetched
  - id: check
    run: test -e `+flag+` || { echo not fixed yet >&2; exit 3; }
  - id: publish
    run: echo published
`), 0o600))
	id := runDetached(t, bin, home, wf)
	polltest.Until(t, "the pipeline to fail", func() bool { return viewFlow(t, home, id).Status == sdk.FlowFailed }, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
	require.NoError(t, os.WriteFile(flag, nil, 0o600))

	ctx := browser(t, exe)
	loginAs(t, ctx, base, "alice-token")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/flows/"+id),
		chromedp.WaitVisible(chromedp.CSS(`#flow-actions`)),
	))
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href="/flows/`+id+`/continue"]`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "Continue asks first, on a page of its own")
	require.Equal(t, id, viewFlow(t, home, id).ID)
	require.Empty(t, viewFlow(t, home, id).ContinuedBy, "asking changes nothing")

	resp, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#confirm`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the confirmed continuation leads to the successor's page")
	succ := viewFlow(t, home, id).ContinuedBy
	require.NotEmpty(t, succ)
	require.True(t, strings.HasSuffix(resp.URL, "/flows/"+succ), "the page is the successor's: %s", resp.URL)
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('#flow-status')?.innerText.trim() === 'succeeded'`)))
	v := viewFlow(t, home, succ)
	require.Equal(t, sdk.FlowSucceeded, v.Status)
	require.Equal(t, []string{"fetch"}, v.Continuation.Reuse, "the step that succeeded is reused")

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/flows/"+id), chromedp.WaitVisible(chromedp.CSS(`#history`))))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](historyRows))
	require.NoError(t, err)
	require.Contains(t, strings.Join(rows, "\n"), "continued as flow "+succ+": continued from the run center by alice")
}

// TestRunCenterRunNowInChromium drives Run now in headless Chromium
// against a real gateway binary: a cron job with a far-future schedule,
// run from its page after the confirmation, shows the run on its page,
// by the token's name, and the run's flow exists.
func TestRunCenterRunNowInChromium(t *testing.T) {
	exe := chromium(t)
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := startRunCenter(t, bin, home, work, logf, "http:\n  addr: 127.0.0.1:0\n  tokens:\n    - name: alice\n      token: alice-token\n")

	wf := filepath.Join(work, "report.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: report\nsteps:\n  - id: write\n    run: echo reported\n"), 0o600))
	flowgate(t, bin, "--home", home, "cron", "add", "--name", "new-year", "--cron", "0 0 1 1 *", "--pipeline", wf)

	ctx := browser(t, exe)
	loginAs(t, ctx, base, "alice-token")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/cron"),
		chromedp.WaitVisible(chromedp.CSS(`a[href$="/run"]`)),
	))
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href$="/run"]`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "Run now asks first, on a page of its own")
	resp, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#confirm`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the run leads to the job's page")
	require.Contains(t, resp.URL, "/cron/")
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('table.list tbody a[href^="/flows/"]') !== null`)))
	row, err := textOf(ctx, `table.list tbody tr`)
	require.NoError(t, err)
	require.Contains(t, row, "manual by alice", "the run names who asked")
	flowID, err := textOf(ctx, `table.list tbody a[href^="/flows/"] code`)
	require.NoError(t, err)
	v := viewFlow(t, home, strings.TrimSpace(flowID))
	require.Equal(t, strings.TrimSpace(flowID), v.ID, "the run's flow exists")
}
