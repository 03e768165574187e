package main_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// nodePhase is the phase the step graph shows for node id.
func nodePhase(id string) string {
	return `document.querySelector('#graph g[data-node="` + id + `"]')?.dataset.phase`
}

// TestRunCenterGraphFollowsARun drives a flow's step graph in headless
// Chromium against a real gateway binary: while a 3-step pipeline runs,
// the graph shows its middle step running, then failed, without a
// reload; with JavaScript off the same graph is in the page's HTML as
// links. The continuation `tasks flow continue` makes shows its first
// step reused in its own graph.
func TestRunCenterGraphFollowsARun(t *testing.T) {
	exe := chromium(t)
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := startRunCenter(t, bin, home, work, logf, "http:\n  addr: 127.0.0.1:0\n")

	// The middle step runs until the test creates release, then fails
	// unless fixed exists.
	release, fixed := filepath.Join(work, "release"), filepath.Join(work, "fixed")
	wf := filepath.Join(work, "graphed.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: graphed
steps:
  - id: fetch
    run: echo fetched
  - id: check
    run: 'while [ ! -e `+release+` ]; do sleep 0.05; done; test -e `+fixed+` || { echo not fixed >&2; exit 3; }'
  - id: report
    run: echo reported
`), 0o600))
	id := runDetached(t, bin, home, wf)

	ctx := browser(t, exe)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/flows/"+id),
		until(nodePhase("check")+` === 'running'`),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.stayed = true`)(ctx, t)
			return err
		}),
	))
	phases, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`['fetch', 'check', 'report'].map(id => `+nodePhase("' + id + '")+`)`))
	require.NoError(t, err)
	require.Equal(t, []string{"succeeded", "running", "pending"}, phases, "the graph shows the run as it stands")

	require.NoError(t, os.WriteFile(release, nil, 0o600))
	require.NoError(t, chromedp.Do(ctx, until(nodePhase("check")+` === 'failed'`)))
	stayed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.stayed === true`))
	require.NoError(t, err)
	require.True(t, stayed, "the graph followed the run without a reload")
	phases, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`['fetch', 'check', 'report'].map(id => `+nodePhase("' + id + '")+`)`))
	require.NoError(t, err)
	require.Equal(t, []string{"succeeded", "failed", "pending"}, phases)

	// Clicking the failed node opens its task's card.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#graph g[data-node="check"] a`)),
		until(`location.hash.startsWith('#task-') && document.querySelector(location.hash)?.innerText.includes('check')`),
	))

	// With JavaScript off the graph is in the HTML, each node a link.
	resp, err := http.Get(base + "/flows/" + id)
	require.NoError(t, err)
	html, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(html), `data-node="check" data-phase="failed">`)
	require.Regexp(t, `data-node="check" data-phase="failed">\n<a class="ph-failed" href="#task-`, string(html))

	// Continue the failed flow from the CLI; the successor's graph shows
	// fetch reused.
	require.NoError(t, os.WriteFile(fixed, nil, 0o600))
	v := viewFlow(t, home, id)
	require.Equal(t, sdk.FlowFailed, v.Status)
	out := flowgate(t, bin, "--home", home, "tasks", "flow", "continue", id, "--expected-revision", strconv.FormatInt(v.Revision, 10), "--reason", "the fix is in")
	succ := strings.Fields(out)[3]
	polltest.Until(t, "the continuation to succeed", func() bool { return viewFlow(t, home, succ).Status == sdk.FlowSucceeded }, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/flows/"+succ),
		until(nodePhase("report")+` === 'succeeded'`),
	))
	phases, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`['fetch', 'check', 'report'].map(id => `+nodePhase("' + id + '")+`)`))
	require.NoError(t, err)
	require.Equal(t, []string{"reused", "succeeded", "succeeded"}, phases, "the continuation reused fetch")
}
