package plugintest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// watchedEnv names a file the "watcher" helpers use: the first process
// to watch makes it; a "brittle" watch fails when it exists.
const watchedEnv = "FLOWGATE_PLUGINTEST_WATCHED"

// watcher is follower with a Watch, which runs until it is stopped; when
// brittle, every watch but the first process's fails.
type watcher struct {
	follower
	brittle bool
}

func (watcher) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "watcher", Version: "0.0.1", APIVersion: sdk.APIVersion, Watch: true}, nil
}

func (w watcher) Watch(ctx context.Context, _ sdk.Host) error {
	f, err := os.OpenFile(os.Getenv(watchedEnv), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err == nil {
		f.Close()
	} else if w.brittle {
		return errors.New("this watch fails after a restart")
	}
	<-ctx.Done()
	return nil
}

// A plugin whose Watch runs again in its new process passes
// watch-restart; one whose Watch fails after the restart fails it, and
// the report says what to do.
func TestWatchRestartCase(t *testing.T) {
	t.Parallel()
	for helper, pass := range map[string]bool{"watcher": true, "brittle": false} {
		t.Run(helper, func(t *testing.T) {
			t.Parallel()
			c := runHelperEnv(t, helper, map[string]string{watchedEnv: t.TempDir() + "/watched"})["watch-restart"]
			did := strings.Join(c.Did, "\n")
			require.Equal(t, pass, c.Pass, "%s\n%s", c.Detail, did)
			if pass {
				require.Contains(t, did, "its Watch called again")
			} else {
				require.Contains(t, c.Detail, "a Watch that returns an error restarts the plugin")
			}
		})
	}
}
