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

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
)

// chromium returns the Chromium to drive. Without one the test is
// skipped, unless CI is set: CI installs Debian's chromium, so there a
// missing browser fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("FLOWGATE_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI must run the run center's browser tests: apt-get install -y chromium (.ci/run does)")
	}
	t.Skip("chromium is not installed (apt-get install chromium, or set FLOWGATE_CHROMIUM): skipping the run center's browser tests")
	return ""
}

// browser starts a headless Chromium with a fresh profile; the test's
// cleanup stops it.
func browser(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 1000),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	actx, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, stopBrowser := chromedp.NewContext(actx)
	ctx, stopTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { stopTimeout(); stopBrowser(); stopAlloc() })
	return ctx
}

// artifacts is where the test leaves its screenshot: $FLOWGATE_ARTIFACTS,
// or the test's temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("FLOWGATE_ARTIFACTS"); d != "" {
		require.NoError(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}

// until waits, bounded, for the JavaScript expression js to be true.
func until(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
}

// startRunCenter starts bin's gateway on home with gateway.yaml (in
// work) holding config, its run center on a random loopback port, and
// returns the run center's URL; the gateway is killed when the test ends.
func startRunCenter(t *testing.T, bin, home, work string, logf *os.File, config string) string {
	t.Helper()
	file := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(file, []byte(config), 0o600))
	g := startGateway(t, bin, home, logf, "--config", file)
	t.Cleanup(func() { g.kill(t) })
	return runCenterURL(t, home)
}

// textOf reads the text of the first element css selects, waiting
// (bounded) for one to be there, in one script evaluation: a page that
// /pulse or a live update redraws may replace the element between the
// query and the read of a chromedp.Text, which then fails with "No node
// with given id found".
func textOf(ctx context.Context, css string) (string, error) {
	if err := chromedp.Do(ctx, until(fmt.Sprintf(`document.querySelector(%q) !== null`, css))); err != nil {
		return "", err
	}
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, css)))
}

// historyRows is the flow page's history: seq, kind and summary of each
// row.
const historyRows = `Array.from(document.querySelectorAll('#history tr')).map(r => [0, 2, 3].map(i => r.cells[i].innerText.trim()).join(' | '))`

// TestRunCenterInChromium drives the run center of a real gateway binary
// in headless Chromium: it logs in with a named token, opens the flow
// list, watches a task's progress bar move without a reload, approves a
// pipeline parked at a gate in the page, sees the flow finish with the
// token's name as the approver in its history, and sees the same history
// after a reload. A screenshot of the flow page is left as an artifact.
// Last, the pages must fit a phone-width screen.
func TestRunCenterInChromium(t *testing.T) {
	exe := chromium(t)
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := startRunCenter(t, bin, home, work, logf, "http:\n  addr: 127.0.0.1:0\n  tokens:\n    - name: alice\n      token: alice-token\n")

	// A task that reports 30%, then 70% when told, then finishes when told.
	go1, go2 := filepath.Join(work, "go1"), filepath.Join(work, "go2")
	out, err := exec.Command(bin, "--home", home, "tasks", "run", "--detach", "--label", "progress <b>bar</b>", "--", "sh", "-c", `
p=$FLOWGATE_PROGRESS
echo '{"fraction":0.3,"phase":"warming up"}' >>$p
while [ ! -e `+go1+` ]; do sleep 0.05; done
echo '{"fraction":0.7,"phase":"working"}' >>$p
while [ ! -e `+go2+` ]; do sleep 0.05; done
echo '{"fraction":1,"phase":"done"}' >>$p
`).CombinedOutput()
	require.NoError(t, err, "%s", out)
	taskFlow := strings.TrimSuffix(strings.Fields(string(out))[3], ")")

	wf := filepath.Join(work, "ship.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: ship
steps:
  - id: build
    run: echo built
  - id: review
    approval: Ship it?
  - id: deploy
    run: echo deployed
`), 0o600))
	gated := runDetached(t, bin, home, wf)

	ctx := browser(t, exe)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), "alice-token"),
	))
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`.login button`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the login leads to the flow list")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#flows`))))
	list, err := textOf(ctx, `#flows`)
	require.NoError(t, err)
	require.Contains(t, list, taskFlow, "the flow list shows the task's flow")
	require.Contains(t, list, gated, "and the pipeline's")

	// The bar moves from 30% to 70% while the page stays loaded.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/flows/"+taskFlow),
		until(`document.querySelector('progress[data-task]')?.value === 30`),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.stayed = true`)(ctx, t)
			return err
		}),
	))
	require.NoError(t, os.WriteFile(go1, nil, 0o600))
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('progress[data-task]')?.value === 70`)))
	stayed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.stayed === true`))
	require.NoError(t, err)
	require.True(t, stayed, "the bar moved without a reload")
	require.NoError(t, os.WriteFile(go2, nil, 0o600))
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('#flow-status')?.innerText.trim() === 'succeeded'`)))

	// The pipeline waits at its gate; approve it in the page.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/flows/"+gated),
		until(`document.querySelector('button[value="approve"]') !== null`),
	))
	resp, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the approval leads back to the flow's page")
	require.NoError(t, chromedp.Do(ctx,
		until(`document.querySelector('#flow-status')?.innerText.trim() === 'succeeded'`),
		// A page drawn after the flow ended follows /pulse, not the stream.
		until(`document.body.dataset.live === 'ended' || !document.querySelector('#main').dataset.stream`),
	))
	before, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](historyRows))
	require.NoError(t, err)
	joined := strings.Join(before, "\n")
	require.Contains(t, joined, "approval gate review approved by alice", "the history names the token's name as the approver")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	file := filepath.Join(artifacts(t), "runcenter-flow.png")
	require.NoError(t, os.WriteFile(file, shot, 0o644))
	t.Logf("screenshot of the flow page: %s", file)

	require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#history`))))
	after, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](historyRows))
	require.NoError(t, err)
	require.Equal(t, before, after, "a reload shows the same history")

	// At phone width the pages fit the screen: nothing scrolls sideways
	// but the tables' own scroll boxes.
	for _, page := range []string{"/", "/flows/" + gated, "/gates", "/cron"} {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
			chromedp.Navigate(base+page),
			chromedp.WaitVisible(chromedp.CSS(`#main`)),
		))
		fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`Math.max(document.body.scrollWidth, document.documentElement.scrollWidth) <= 390`))
		require.NoError(t, err)
		require.True(t, fits, "%s fits a phone-width screen", page)
	}
}

// runCenterURL is the run center's base URL (no trailing slash) of the
// gateway running for home, as its status names it.
func runCenterURL(t *testing.T, home string) string {
	t.Helper()
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	st, err := c.Status(context.Background())
	c.Close()
	require.NoError(t, err)
	require.NotEmpty(t, st.HTTPURL(), "gateway status names the run center")
	return strings.TrimSuffix(st.HTTPURL(), "/")
}
