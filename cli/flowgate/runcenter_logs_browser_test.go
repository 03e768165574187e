package main_test

import (
	"context"
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

// TestRunCenterLogsAndTimesInChromium drives the logs page of a real
// gateway binary in headless Chromium: a pipeline whose second step
// fails opens its logs on that step's stderr, showing the error, and the
// stdout tab shows its stdout; the page fits a phone; a followed log
// shows new lines without a reload. In a browser set to
// Tokyo time, the flow page shows its times in Tokyo's zone, with UTC on
// hover.
func TestRunCenterLogsAndTimesInChromium(t *testing.T) {
	exe := chromium(t)
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	base := startRunCenter(t, bin, home, work, logf, "http:\n  addr: 127.0.0.1:0\n")

	wf := filepath.Join(work, "breaks.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: breaks
steps:
  - id: build
    run: echo built
  - id: check
    run: echo all went well; echo boom disk full >&2; exit 3
  - id: deploy
    run: echo deployed
`), 0o600))
	id := runDetached(t, bin, home, wf)
	polltest.Until(t, "the pipeline to fail", func() bool { return viewFlow(t, home, id).Status == sdk.FlowFailed }, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))

	ctx := browser(t, exe)
	// The ended flow's page follows /pulse, which sends the page again as
	// it connects: the same page must not be redrawn under the reader.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/flows/"+id),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(document.querySelector('a[href$="/logs"]').dataset.kept = "yes", true)`)(ctx, t)
			return err
		}),
		until(`document.body.dataset.live === 'on'`),
	))
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('a[href$="/logs"]').dataset.kept === "yes"`))
	require.NoError(t, err)
	require.True(t, kept, "the pulse left the unchanged page alone")
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href="/flows/`+id+`/logs"]`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the flow's Logs link leads to its logs")
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('#streams a.on')?.innerText === 'stderr'`)))
	text, err := textOf(ctx, `#log`)
	require.NoError(t, err)
	require.Contains(t, text, "boom disk full", "the logs page opens on the failed step's stderr")
	require.NotContains(t, text, "all went well")

	resp, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#streams a[data-stream="stdout"]`)))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status, "the stdout tab is a page of its own")
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('#streams a.on')?.innerText === 'stdout'`)))
	text, err = textOf(ctx, `#log`)
	require.NoError(t, err)
	require.Contains(t, text, "all went well", "the stdout tab shows stdout")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#log`)),
	))
	fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`Math.max(document.body.scrollWidth, document.documentElement.scrollWidth) <= 390`))
	require.NoError(t, err)
	require.True(t, fits, "the logs page fits a phone-width screen")

	// Follow tails a log as it grows, without a reload.
	more := filepath.Join(work, "more")
	out, err := exec.Command(bin, "--home", home, "tasks", "run", "--detach", "--", "sh", "-c",
		`echo first line; while [ ! -e `+more+` ]; do sleep 0.05; done; echo second line`).CombinedOutput()
	require.NoError(t, err, "%s", out)
	tailed := strings.TrimSuffix(strings.Fields(string(out))[3], ")")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1100, 1000),
		chromedp.Navigate(base+"/flows/"+tailed+"/logs?follow=1"),
		until(`document.querySelector('#log[data-follow]')?.innerText.includes('first line')`),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.stayed = true`)(ctx, t)
			return err
		}),
	))
	require.NoError(t, os.WriteFile(more, nil, 0o600))
	require.NoError(t, chromedp.Do(ctx, until(`document.querySelector('#log[data-follow]')?.innerText.includes('second line')`)))
	stayed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.stayed === true`))
	require.NoError(t, err)
	require.True(t, stayed, "the followed log grew without a reload")

	// In Tokyo the flow's creation time reads in Tokyo's zone; the hover
	// and the datetime keep UTC.
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	created := viewFlow(t, home, id).CreatedAt.UTC().Truncate(time.Second)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"})
			return err
		}),
		chromedp.Navigate(base+"/flows/"+id),
		until(`document.querySelector('time[data-local]') !== null`),
	))
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { const t = document.querySelector('time[datetime="`+created.Format(time.RFC3339)+`"]'); return [t.textContent, t.title]; })()`))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(shown[0], created.In(tokyo).Format("2006-01-02 15:04:05")+" "), "the time reads in Tokyo's zone: %q", shown[0])
	require.Equal(t, created.Format("2006-01-02 15:04:05")+" UTC", shown[1], "the hover says UTC")
}
