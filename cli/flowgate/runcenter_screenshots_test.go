package main_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

var screenshots = flag.String("screenshots", "", "write the run center's screenshots for docs/runcenter.md into this directory (docs/screenshots.sh)")

// TestRunCenterScreenshots makes the screenshots docs/runcenter.md shows,
// when run with -screenshots DIR (docs/screenshots.sh does): a real
// gateway binary in a temporary home runs a small pipeline that fails in
// its middle step and a cron job, and headless Chromium saves the flow's
// page, its step graph, its timeline (when the page has one) and the cron
// page as PNG files in DIR. Without the flag it is skipped.
func TestRunCenterScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("pass -screenshots DIR to write the run center's screenshots (docs/screenshots.sh)")
	}
	dir, err := filepath.Abs(*screenshots)
	require.NoError(t, err)
	exe := chromium(t)
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := startRunCenter(t, bin, home, work, logf, "http:\n  addr: 127.0.0.1:0\n")

	release := filepath.Join(work, "release.lobster")
	require.NoError(t, os.WriteFile(release, []byte(`name: release
steps:
  - id: fetch
    run: echo '["api", "web", "worker"]'
  - id: lint
    when: $fetch.json == 0
    run: echo nothing to lint
  - id: build
    for_each: $fetch.json
    steps:
      - id: image
        run: sleep 0.2; echo built $item.stdout
  - id: test
    run: 'echo 3 passed; echo "1 failed in web/login_test" >&2; exit 1'
  - id: publish
    run: echo published
`), 0o600))
	report := filepath.Join(work, "report.lobster")
	require.NoError(t, os.WriteFile(report, []byte("name: report\nsteps:\n  - id: collect\n    run: echo collected\n  - id: send\n    stdin: $collect.stdout\n    run: cat\n"), 0o600))
	id := runDetached(t, bin, home, release)
	flowgate(t, bin, "--home", home, "cron", "add", "--name", "nightly-report", "--cron", "0 3 * * *", "--tz", "Europe/Paris", "--pipeline", report)
	flowgate(t, bin, "--home", home, "cron", "add", "--name", "heartbeat", "--every", "15m", "--command", "echo ok")
	flowgate(t, bin, "--home", home, "cron", "run", "nightly-report", "--wait")
	polltest.Until(t, "the release pipeline to fail", func() bool { return viewFlow(t, home, id).Status == sdk.FlowFailed }, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))

	ctx := browser(t, exe)
	save := func(name string, shot []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), shot, 0o644))
		t.Logf("wrote %s (%d KiB)", filepath.Join(dir, name), len(shot)>>10)
	}
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1000, 900),
		chromedp.Navigate(base+"/flows/"+id),
		until(`document.body.dataset.live === 'ended' || !document.querySelector('#main').dataset.stream`),
		until(`document.querySelector('time[data-local]') !== null`),
	))
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	save("runcenter-flow.png", shot)
	shot, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`section.graph`)))
	require.NoError(t, err)
	save("runcenter-graph.png", shot)
	timeline, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#timeline') !== null`))
	require.NoError(t, err)
	if timeline {
		shot, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#timeline`)))
		require.NoError(t, err)
		save("runcenter-timeline.png", shot)
	} else {
		t.Log("the flow page has no #timeline yet: runcenter-timeline.png is left as it is")
	}
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/cron"),
		until(`document.querySelector('#main')?.innerText.includes('nightly-report')`),
	))
	shot, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#main`)))
	require.NoError(t, err)
	save("runcenter-cron.png", shot)
}
