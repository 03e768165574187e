package grpctest_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/grpctest"
	"github.com/flowgate/flowgate/sdk/pluginclient"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// quiet is a controller that does nothing.
type quiet struct{}

func (quiet) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "quiet", Version: "0", APIVersion: sdk.APIVersion}, nil
}
func (quiet) HandleEvent(context.Context, sdk.Host, sdk.Event) error { return nil }
func (quiet) Shutdown(context.Context) error                         { return nil }

// lockedBuffer is a bytes.Buffer any goroutine may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A connection made with GRPCConn, used and closed, writes none of
// go-plugin's debug lines where hclog writes by default (stderr, which
// go test -v shows): go-plugin's own TestPluginGRPCConn logs there at
// debug level. Not parallel: it redirects hclog's default output.
func TestGRPCConnKeepsGoPluginsDebugLinesOutOfTheOutput(t *testing.T) {
	var out lockedBuffer
	saved := hclog.DefaultOutput
	hclog.DefaultOutput = &out
	t.Cleanup(func() { hclog.DefaultOutput = saved })

	t.Run("conn", func(t *testing.T) {
		client := grpctest.GRPCConn(t, pluginclient.ServePluginSet(quiet{}))
		p, err := pluginclient.Connect(t.Context(), client, sdktest.NewHost())
		require.NoError(t, err)
		info, err := p.Info(t.Context())
		require.NoError(t, err)
		require.Equal(t, "quiet", info.Name)
		require.NoError(t, p.Shutdown(t.Context()))
		require.NoError(t, client.Close())
	})
	require.NotContains(t, out.String(), "[DEBUG]")
}
