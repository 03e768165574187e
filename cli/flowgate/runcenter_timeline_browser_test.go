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

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// chainSite is a real gateway binary serving the run center, with a
// continued chain: a pipeline whose step check reported usage and failed,
// and its continuation, which reused step build and ran check again.
type chainSite struct {
	bin, home, work, base string
	src, succ             string
}

// startChainSite starts the gateway and runs the chain to its end.
func startChainSite(t *testing.T) chainSite {
	t.Helper()
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	config := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte("http:\n  addr: 127.0.0.1:0\n"), 0o600))
	g := startGateway(t, bin, home, logf, "--config", config)
	t.Cleanup(func() { g.kill(t) })
	cs := chainSite{bin: bin, home: home, work: work, base: runCenterURL(t, home)}

	flag := filepath.Join(work, "flag")
	wf := filepath.Join(work, "digest.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(fmt.Sprintf(`name: digest
steps:
  - id: build
    run: echo built
  - id: check
    run: echo '{"usage":{"input_tokens":100,"output_tokens":20}}' >> "$FLOWGATE_PROGRESS"; test -f %s
`, flag)), 0o600))
	cs.src = runDetached(t, bin, home, wf)
	polltest.Until(t, "the first run to fail", func() bool { return viewFlow(t, home, cs.src).Status == sdk.FlowFailed }, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	out, err := exec.Command(bin, "--home", home, "pipeline", "continue", "--id", cs.src, "--reason", "the flag file was missing").CombinedOutput()
	require.NoError(t, err, "%s", out)
	polltest.Until(t, "the continuation", func() bool { return viewFlow(t, home, cs.src).ContinuedBy != "" }, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
	cs.succ = viewFlow(t, home, cs.src).ContinuedBy
	polltest.Until(t, "the continuation to succeed", func() bool { return viewFlow(t, home, cs.succ).Status == sdk.FlowSucceeded }, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
	return cs
}

// TestRunCenterTimelineAndChainInChromium drives a flow page of a real
// gateway binary in headless Chromium: the timeline shows a running
// task's bar, drawn again up to now when the task reports progress, and
// a finished bar once the task ends, all without a reload; a continuation's
// page shows its chain, both runs linked, the reused step and the tokens
// both runs reported.
func TestRunCenterTimelineAndChainInChromium(t *testing.T) {
	exe := chromium(t)
	cs := startChainSite(t)
	go1, go2 := filepath.Join(cs.work, "go1"), filepath.Join(cs.work, "go2")
	out, err := exec.Command(cs.bin, "--home", cs.home, "tasks", "run", "--detach", "--label", "slow <i>step</i>", "--", "sh", "-c", `
p=$FLOWGATE_PROGRESS
echo '{"fraction":0.3}' >>$p
while [ ! -e `+go1+` ]; do sleep 0.05; done
echo '{"fraction":0.6}' >>$p
while [ ! -e `+go2+` ]; do sleep 0.05; done
`).CombinedOutput()
	require.NoError(t, err, "%s", out)
	flow := strings.TrimSuffix(strings.Fields(string(out))[3], ")")

	const running = `document.querySelector('#timeline rect[data-kind="running"][data-open]')`
	ctx := browser(t, exe)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(cs.base+"/flows/"+flow),
		until(running+` !== null && document.querySelector('progress[data-task]')?.value === 30`),
	))
	before, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { document.querySelector('#timeline').dataset.seen = '1'; window.stayed = true; return `+running+`.textContent; })()`))
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(go1, nil, 0o600))
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('progress[data-task]')?.value === 60 && !document.querySelector('#timeline').dataset.seen && `+running+` !== null`)))
	after, err := chromedp.Run(ctx, chromedp.Evaluate[string](running+`.textContent`))
	require.NoError(t, err)
	require.Contains(t, after, "so far")
	require.NotEqual(t, before, after, "the running bar was drawn again, up to a later now, on the progress report")

	require.NoError(t, os.WriteFile(go2, nil, 0o600))
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('#timeline rect[data-kind="succeeded"]') !== null && document.querySelector('#timeline rect[data-open]') === null`)))
	stayed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.stayed === true`))
	require.NoError(t, err)
	require.True(t, stayed, "the bar changed without a reload")
	label, err := textOf(ctx, `#timeline .tl-label a`)
	require.NoError(t, err)
	require.Equal(t, "slow <i>step</i>", label, "the label is text")

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cs.base+"/flows/"+cs.succ), chromedp.WaitVisible(chromedp.CSS(`#chain`))))
	runs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#chain .chain-runs a')).map(a => a.getAttribute('href'))`))
	require.NoError(t, err)
	require.Equal(t, []string{"/flows/" + cs.src, "/flows/" + cs.succ}, runs, "both runs, first run first")
	reused, err := textOf(ctx, `#chain .chain-reused`)
	require.NoError(t, err)
	require.Equal(t, "build", reused)
	usage, err := textOf(ctx, `#chain .chain-usage`)
	require.NoError(t, err)
	require.Contains(t, usage, "240 tokens (200 in, 40 out) from 2 reports", "the tokens of both runs")
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#chain .chain-runs a[href="/flows/`+cs.src+`"]`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the first run's link leads to its page")
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('#chain li[data-run="`+cs.src+`"] b')?.innerText === 'this run'`)))
}

// TestRunCenterFlowPageFitsAPhoneInChromium loads a continuation's flow
// page, with its tasks, timeline, chain and history, 375 px wide: the
// page does not scroll sideways (wide parts scroll in their own box).
func TestRunCenterFlowPageFitsAPhoneInChromium(t *testing.T) {
	exe := chromium(t)
	cs := startChainSite(t)
	ctx := browser(t, exe)
	for _, id := range []string{cs.src, cs.succ} {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile),
			chromedp.Navigate(cs.base+"/flows/"+id),
			chromedp.WaitVisible(chromedp.CSS(`#chain`)),
			chromedp.WaitVisible(chromedp.CSS(`#timeline`)),
		))
		width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		require.NoError(t, err)
		require.LessOrEqual(t, width, 375, "the page of %s fits a 375 px screen", id)
	}
}

// TestRunCenterFlowPageReadsWithoutJavaScriptInChromium loads a
// continuation's flow page with JavaScript off: its tasks, their
// timeline bars and the chain panel are all there, drawn by the server,
// with times in UTC.
func TestRunCenterFlowPageReadsWithoutJavaScriptInChromium(t *testing.T) {
	exe := chromium(t)
	cs := startChainSite(t)
	ctx := browser(t, exe)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.Navigate(cs.base+"/flows/"+cs.succ),
		chromedp.WaitVisible(chromedp.CSS(`#chain`)),
	))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[
		document.querySelectorAll('article.task').length,
		document.querySelectorAll('#timeline .tl-row').length,
		document.querySelectorAll('#timeline rect[data-kind="succeeded"]').length,
		document.querySelectorAll('#chain .chain-runs a').length,
		document.querySelectorAll('time[data-local]').length]`))
	require.NoError(t, err)
	require.Equal(t, []int{1, 1, 1, 2, 0}, got, "one task (check; build was reused), its strip and bar, both runs, and no script ran")
}
