package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// PluginReloader is the part of Client that restarts one controller
// plugin (`flowgate plugins reload`).
type PluginReloader interface {
	// ReloadPlugin replaces the running process of the plugin name with a
	// new one and resets its last error (see pluginhost.Supervisor.Reload):
	// it returns the plugin's status once the new process runs, or the
	// reason it could not start. An unknown name matches sdk.ErrNotFound;
	// a Local client (no gateway) returns ErrNoGateway.
	ReloadPlugin(ctx context.Context, name string) (apitype.PluginStatus, error)
}

// ReloadPlugin reports that no gateway runs, so no plugin does.
func (l *Local) ReloadPlugin(context.Context, string) (apitype.PluginStatus, error) {
	return apitype.PluginStatus{}, fmt.Errorf("%w: plugins run inside the gateway; start one with flowgate gateway", ErrNoGateway)
}

// ReloadPlugin has the gateway restart the plugin name.
func (c *Remote) ReloadPlugin(ctx context.Context, name string) (apitype.PluginStatus, error) {
	if name == "" {
		return apitype.PluginStatus{}, emptyID("plugin")
	}
	var out apitype.PluginStatus
	if err := c.call(ctx, http.MethodPost, "/v1/plugins/"+pathSegment(name)+"/reload", nil, nil, &out); err != nil {
		return apitype.PluginStatus{}, err
	}
	return out, nil
}

func (s *server) reloadPlugin(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	st, err := s.c.ReloadPlugin(r.Context(), r.PathValue("name"))
	return http.StatusOK, st, err
}
