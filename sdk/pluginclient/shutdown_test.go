package pluginclient_test

import (
	"context"
	"log"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk/pluginclient"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A plugin torn down while Connect sets it up (a gateway stopping while a
// plugin starts) logs nothing: go-plugin's AcceptAndServe used to log
// "[ERR] plugin: plugin acceptAndServe error: broker closed" to the
// standard logger when the broker closed before it accepted. Not
// parallel: it captures the standard logger.
func TestConnectCutShortLogsNothing(t *testing.T) {
	var logged syncBuffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })

	for range 40 {
		client := sdktest.GRPCConn(t, pluginclient.ServePluginSet(newProbe(nil)))
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the gateway is stopping
		_, err := pluginclient.Connect(ctx, client, sdktest.NewHost())
		require.Error(t, err)
		_ = client.Close()
	}
	// Anything still accepting for a Connect has logged once it is gone.
	deadline := time.Now().Add(30 * time.Second)
	for accepting() {
		require.True(t, time.Now().Before(deadline), "a Connect left a goroutine accepting on the broker")
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
	require.NotContains(t, logged.String(), "acceptAndServe")
}

// accepting reports whether any goroutine is inside go-plugin's
// AcceptAndServe.
func accepting() bool {
	buf := make([]byte, 1<<22)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "AcceptAndServe")
}
