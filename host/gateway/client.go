package gateway

import (
	"context"
	"os"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Client returns a client that talks to this gateway in-process.
func (g *Gateway) Client() api.Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.client()
}

func (g *Gateway) client() *client {
	local := api.NewLocal(g.st.Store, g.eng, g.cfg.Home, g.sched).WakeOn(&g.changes, followBackstop)
	return &client{Local: local, g: g}
}

// followBackstop is how often the in-process client's followers (history
// streams, /pulse) read again when no write woke them: the bound on how
// late they show another gateway's write to a shared store, which this
// gateway is not told of.
const followBackstop = 5 * time.Second

// client is the in-process client: the engine's calls, the cron calls on
// the gateway's running scheduler, backups and checks of its store, and
// the status of the gateway it belongs to. Closing it does not close the
// gateway (Close is overridden below; the store is the gateway's).
type client struct {
	*api.Local
	g *Gateway
}

// RunTask records a queued task; the values it holds (secrets, the
// caller's environment) are kept by this gateway's runner, in memory only.
// A detached run that asks for the default max budget or no-progress
// budget gets this gateway's (limits.detached_max_budget,
// limits.detached_no_progress_budget).
func (c *client) RunTask(ctx context.Context, in apitype.CreateTaskInput) (*stored.Task, bool, error) {
	if in.DetachedBudget && in.Spec.MaxBudget == 0 {
		in.Spec.MaxBudget = sdk.Duration(c.g.cfg.File.DetachedMaxBudget())
	}
	if in.DetachedNoProgress && in.Spec.NoProgressBudget == 0 {
		in.Spec.NoProgressBudget = sdk.Duration(c.g.cfg.File.DetachedNoProgressBudget())
	}
	in.DetachedBudget, in.DetachedNoProgress = false, false
	held := in.HeldEnv
	in.HeldEnv = nil
	return c.g.run.CreateHolding(in.Spec, held, func() (*stored.Task, bool, error) { return c.Local.RunTask(ctx, in) })
}

// Status reports this gateway, with whether its store takes writes.
func (c *client) Status(ctx context.Context) (api.GatewayStatus, error) {
	s, err := c.Local.Status(ctx)
	if err != nil {
		return s, err
	}
	s.Running, s.PID = true, os.Getpid()
	s.Started = c.g.started
	s.Uptime = time.Since(c.g.started).Seconds()
	s.MaxRunning = c.g.run.MaxRunning()
	sh, fh := c.g.st.health(), c.g.run.FilesHealth()
	s.Store, s.TaskFiles = api.WriteHealthOf(sh), api.WriteHealthOf(fh)
	if a := c.g.httpAddr.Load(); a != nil {
		s.HTTPAddr, s.HTTPTLS = *a, c.g.cfg.File.HTTP.TLS()
	}
	return s, nil
}

// CronStatus reports every job, fired by this gateway's scheduler.
func (c *client) CronStatus(ctx context.Context) (api.CronStatus, error) {
	s, err := c.Local.CronStatus(ctx)
	if err != nil {
		return s, err
	}
	s.Running = true
	return s, nil
}

// Plugins describes the gateway's controller plugins.
func (c *client) Plugins(context.Context) ([]apitype.PluginStatus, error) {
	return api.PluginStatusesOf(c.g.sup.Statuses()), nil
}

// Audit audits the records knowing the state of the controller plugins.
func (c *client) Audit(ctx context.Context) (apitype.AuditReport, error) {
	rep, err := audit.Run(ctx, audit.Config{}, audit.Input{Engine: c.g.eng, Plugins: c.g.sup.Statuses(), PluginsKnown: true})
	if err != nil {
		return apitype.AuditReport{}, err
	}
	return api.AuditReportOf(rep), nil
}

// Maintain runs a full maintenance pass with the configured retention,
// beside the periodic sweep (the engine keeps the two from colliding).
func (c *client) Maintain(ctx context.Context, apply bool) (api.MaintenanceReport, error) {
	in := audit.Input{Engine: c.g.eng, Plugins: c.g.sup.Statuses(), PluginsKnown: true}
	cfg := c.g.cfg.File.MaintenanceConfig(c.g.cfg.Home)
	cfg.Space, cfg.Mine = c.g.st.space, c.g.st.mine(c.g.cfg.Home)
	return api.Maintain(ctx, c.g.eng, cfg, in, apply)
}

// Close does nothing: the gateway owns the store.
func (c *client) Close() error { return nil }

// Changed returns a channel closed at the next write to the store (see
// api.Changes).
func (c *client) Changed() <-chan struct{} { return c.g.changes.Changed() }
