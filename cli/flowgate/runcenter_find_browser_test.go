package main_test

import (
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// flowNames is the readable name of each row of the flow list, top to
// bottom.
const flowNames = `Array.from(document.querySelectorAll('#flows tbody tr td:first-child > a:first-child')).map(a => a.innerText.trim())`

// TestRunCenterSearchInChromium drives the flow list of a real gateway
// binary in headless Chromium: flows show under their names, typing a
// word into the search box leaves only the flows whose name holds it, and
// the two runs of a cron job fold into one row that opens to list the
// older run.
func TestRunCenterSearchInChromium(t *testing.T) {
	exe := chromium(t)
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := startRunCenter(t, bin, home, work, logf, "http:\n  addr: 127.0.0.1:0\n")

	flowgate := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"--home", home}, args...)...).CombinedOutput()
		require.NoError(t, err, "flowgate %v: %s", args, out)
		return string(out)
	}
	flowgate("cron", "add", "--name", "nightly backup", "--every", "24h", "--command", "true")
	flowgate("cron", "run", "nightly backup", "--wait")
	flowgate("cron", "run", "nightly backup", "--wait")
	for _, label := range []string{"alpha report", "beta upload", "Gamma Report"} {
		flowgate("tasks", "run", "--detach", "--label", label, "--", "true")
	}

	ctx := browser(t, exe)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		until(`document.readyState === 'complete' && document.querySelectorAll('#flows tbody tr').length === 4`),
	))
	all, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](flowNames))
	require.NoError(t, err)
	require.Equal(t, []string{"Gamma Report", "beta upload", "alpha report", "nightly backup"}, all,
		"every flow shows under its name, the job's two runs in one row")

	// Type into the search box: only the flows whose name holds the
	// word show.
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`#find input[name="search"]`), "report")))
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#find button`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the search leads to the flow list")
	require.NoError(t, chromedp.Do(ctx, until(`location.search.includes('search=report') && document.readyState === 'complete'`)))
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](flowNames))
	require.NoError(t, err)
	require.Equal(t, []string{"Gamma Report", "alpha report"}, found, "only the matching flows show")

	// The job's row opens to list its older run.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		until(`document.readyState === 'complete' && document.querySelector('#flows details.runs summary') !== null`),
	))
	closed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.querySelector('#flows details.runs').open && !document.querySelector('#flows details.runs li a').checkVisibility()`))
	require.NoError(t, err)
	require.True(t, closed, "the older run is hidden until the row is opened")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#flows details.runs summary`)),
		until(`document.querySelector('#flows details.runs').open && document.querySelector('#flows details.runs li a').checkVisibility()`),
	))
	summary, err := textOf(ctx, `#flows details.runs summary`)
	require.NoError(t, err)
	require.Contains(t, summary, "2 runs")

	// The toggle shows every run in a row of its own.
	resp, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#runs-toggle`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status)
	every, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](flowNames))
	require.NoError(t, err)
	require.Equal(t, []string{"Gamma Report", "beta upload", "alpha report", "nightly backup", "nightly backup"}, every)
}
