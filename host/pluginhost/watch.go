package pluginhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// watch runs the Watch of instance epoch of in's plugin, which declared
// Info.Watch, for as long as the instance lives. A Watch that fails ends
// the instance as a crash does (wait returns its error), so the
// supervisor restarts the plugin within its budget and the new instance's
// Watch is called again. A Watch that returns nil has nothing more to
// watch: the instance goes on handling events, and Watch is called again
// only when the plugin next starts. A Watch that ends because the
// instance is gone (stopped, replaced, or its process exited) changes
// nothing: the exit is handled where it is seen.
func (s *Supervisor) watch(ctx context.Context, in *instance, conn pluginclient.Plugin, epoch int64, log hclog.Logger) {
	err := conn.Watch(ctx)
	switch {
	case err == nil:
		in.mu.Lock()
		if in.epoch == epoch {
			in.watch = "ended"
		}
		in.mu.Unlock()
		log.Info("plugin watch ended; it is called again when the plugin restarts", "epoch", epoch)
	case ctx.Err() != nil || errors.Is(err, sdk.ErrPluginShutdown) || !in.live(epoch):
		log.Debug("plugin watch ended with its instance", "epoch", epoch, "error", err)
	default:
		in.mu.Lock()
		ch := in.watchFailed
		current := in.epoch == epoch
		in.mu.Unlock()
		if current {
			select {
			case ch <- fmt.Errorf("the plugin's watch failed: %w", err):
			default:
			}
		}
	}
}
