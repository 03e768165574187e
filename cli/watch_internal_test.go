package cli

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

// TestWatchWakesAtTheGatewaysWrite: with a gateway serving the home, a
// watch reads the flow again at the entry the gateway's history stream
// passes on, not on its timers (an hour here).
func TestWatchWakesAtTheGatewaysWrite(t *testing.T) {
	t.Parallel()
	home, err := os.MkdirTemp("", "fgw") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	var fc gateway.FileConfig
	fc.Maintenance.Disabled = true
	g, err := gateway.New(gateway.Config{Home: home, File: fc})
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, g.Stop(context.Background())) })
	c := g.Client()
	f, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "watched", AllowUnknownController: true})
	require.NoError(t, err)

	out, frames := io.Pipe()
	w := &flowWatch{e: &env{stdout: frames, stderr: io.Discard, homeFlag: home}, poll: time.Hour, backstop: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watched := make(chan error, 1)
	go func() {
		watched <- w.run(ctx, f.ID)
		frames.Close()
	}()
	lines := bufio.NewScanner(out)
	frameWith := func(want string) {
		t.Helper()
		for lines.Scan() {
			if strings.Contains(lines.Text(), want) {
				return
			}
		}
		t.Fatalf("the watch ended before a frame with %q: %v", want, lines.Err())
	}
	frameWith("queued")
	_, err = c.UpdateFlow(context.Background(), f.ID, f.Revision, apitype.FlowPatch{Status: sdk.FlowFailed})
	require.NoError(t, err)
	frameWith("failed")
	go func() { _, _ = io.Copy(io.Discard, out) }()
	require.NoError(t, <-watched)
	require.NoError(t, ctx.Err(), "the watch ended with the flow, not at its deadline")
}
