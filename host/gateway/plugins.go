package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// CreateFlow creates a managed flow. A controller this gateway runs no
// plugin for is refused with an error matching sdk.ErrInvalid that lists
// the plugins it runs, since nothing would drive the flow, unless
// in.AllowUnknownController is set (its plugin is to be added later).
func (c *client) CreateFlow(ctx context.Context, in apitype.CreateFlowInput) (*sdk.Flow, error) {
	if err := c.g.knownController(in); err != nil {
		return nil, err
	}
	return c.Local.CreateFlow(ctx, in)
}

// knownController refuses a flow for a controller the gateway has no
// plugin for, unless the input allows it.
func (g *Gateway) knownController(in apitype.CreateFlowInput) error {
	name := strings.TrimSpace(in.ControllerID)
	if name == "" || in.AllowUnknownController { // the engine says a controller is required
		return nil
	}
	names := g.sup.Names()
	if slices.Contains(names, name) {
		return nil
	}
	runs := "no controller plugins"
	if len(names) > 0 {
		runs = "only " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%w: controller %q is not configured in the running gateway (it runs %s), so nothing would drive the flow; check the name, or add the plugin to plugins: (or plugins_dir:) in the gateway config and restart the gateway; to create the flow now for a plugin you add later, pass --allow-unknown-controller (allow_unknown_controller in the API)",
		sdk.ErrInvalid, name, runs)
}

// ReloadPlugin restarts the plugin name (see pluginhost.Supervisor.Reload).
func (c *client) ReloadPlugin(ctx context.Context, name string) (apitype.PluginStatus, error) {
	st, err := c.g.sup.Reload(ctx, name)
	if err != nil {
		return apitype.PluginStatus{}, err
	}
	return api.PluginStatusOf(st), nil
}
