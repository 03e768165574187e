package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/metrics"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
)

// This file builds the gateway's parts over the open records, each from
// the config; start (gateway.go) lists them, registers their listeners
// and starts them.

// newStore is the store part, whose commits m times and which wake the
// in-process client's followers.
func (g *Gateway) newStore(m *metrics.Metrics) *storePart {
	return &storePart{g: g, opts: store.Options{Owner: g.cfg.Owner, Logger: g.cfg.Logger.Named("store"),
		OnCommit: func(d time.Duration) { m.StoreCommitted(d); g.changes.Notify() }}}
}

// newEngine is the engine over st, with the controllers' finish
// notification targets recorded.
func (g *Gateway) newEngine(st *records, m *metrics.Metrics) (*engine.Engine, error) {
	eng, err := engine.New(st.Store, engine.Config{
		TaskRetention:  time.Duration(g.cfg.File.Retention.Tasks),
		MaxActiveFlows: g.cfg.File.Limits.MaxActiveFlows,
		Logger:         g.cfg.Logger.Named("engine"),
		Observer:       m,
	})
	if err != nil {
		return nil, err
	}
	// The targets were checked with the config; a store that takes no
	// write now (a full disk) keeps the ones recorded before, and must
	// not keep the gateway from starting.
	if err := eng.SetControllerNotices(g.controllerNotices()); err != nil {
		g.log.Error("recording the controllers' finish notification targets failed; the ones recorded before apply", "error", err)
	}
	return eng, nil
}

// newRunner is the runner of the tasks on eng, which the member's
// heartbeat on st reports the load of.
func (g *Gateway) newRunner(eng *engine.Engine, st *records, m *metrics.Metrics) (*runner.Runner, error) {
	f := g.cfg.File
	run, err := runner.New(eng, runner.Config{
		Home: g.cfg.Home, MaxRunning: f.Limits.MaxRunning, StageSecretEnv: f.Pipeline.SecretEnv,
		Launch: g.cfg.Launch, Shims: g.cfg.Shims, Poll: g.cfg.Poll, Logger: g.cfg.Logger.Named("runner"),
		FailurePatterns: f.Failures, Diagnoser: f.DiagnoserConfig(), Observer: m,
		Probe: f.ProbeConfig(), Draining: st.draining, Member: st.memberID(), Cluster: st.cluster(g.cfg.Home),
		Departures: st.departures(), Sweep: f.Cluster.sweep(),
		Labels:    f.Cluster.Labels,
		IdleShims: f.Limits.IdleShims, ShimIdleTimeout: time.Duration(f.Limits.ShimIdleTimeout),
	})
	if err != nil {
		return nil, err
	}
	st.runner.Store(run)
	return run, nil
}

// newScheduler is the scheduler of the cron jobs on eng, with the jobs
// the config declares reconciled into the store.
func (g *Gateway) newScheduler(eng *engine.Engine, st *records, m *metrics.Metrics) (*scheduler.Scheduler, error) {
	sched := scheduler.New(eng, scheduler.Config{
		Dests:       dest.CronDests{Book: g.book, Logger: g.cfg.Logger.Named("scheduler")},
		Logger:      g.cfg.Logger.Named("scheduler"),
		SessionsDir: filepath.Join(g.cfg.Home, home.SessionsDir),
		Observer:    m,
		Leader:      st.cronLeader(),
		Member:      st.memberID(),
	})
	if _, _, err := sched.Jobs().Reconcile(g.cfg.File.CronInputs()); err != nil {
		return nil, fmt.Errorf("config cron: %w", err)
	}
	return sched, nil
}

// newSweeper is the maintenance sweep over eng as the part to start,
// unless the config turns it off. Its passes are quick, which never
// measure the store file: Space is left to tasks maintenance
// (client.Maintain).
func (g *Gateway) newSweeper(eng *engine.Engine, st *records) []lifecycle.Named {
	if g.cfg.File.Maintenance.Disabled {
		return nil
	}
	pass := g.cfg.File.MaintenanceConfig(g.cfg.Home)
	pass.Mine = st.mine(g.cfg.Home)
	sweep := maintenance.NewSweeper(eng, maintenance.SweepConfig{
		Interval: time.Duration(g.cfg.File.Maintenance.Interval), First: time.Duration(g.cfg.File.Maintenance.First),
		Pass: pass, Logger: g.cfg.Logger.Named("maintenance"),
	})
	return []lifecycle.Named{{Name: "maintenance sweep", Part: sweep}}
}

// newSupervisor is the plugin supervisor over eng: the configured
// plugins, those found in plugins_dir (already running, which it owns
// from here: its Stop ends them even if it never started) and the
// first-party controllers this process runs.
func (g *Gateway) newSupervisor(ctx context.Context, eng *engine.Engine) (*pluginhost.Supervisor, error) {
	sc := g.cfg.Supervisor
	sc.Self, sc.Logger, sc.LogLevel = g.cfg.Self, g.cfg.Logger, g.cfg.File.LogLevel
	sc.DataDir = filepath.Join(g.cfg.Home, home.DataDir)
	var err error
	if sc.Plugins, sc.Found, sc.InProcess, err = g.pluginSpecs(ctx, sc); err != nil {
		return nil, err
	}
	return pluginhost.NewSupervisor(eng, sc)
}

// newDeliverer is event delivery over eng to the controllers sup runs;
// on etcd a member that joins or leaves wakes it, as it may free event
// streams.
func (g *Gateway) newDeliverer(eng *engine.Engine, sup *pluginhost.Supervisor, st *records, m *metrics.Metrics) *pluginhost.Deliverer {
	dc := g.cfg.Delivery
	dc.Logger, dc.Member, dc.Live = g.cfg.Logger.Named("events"), st.memberID(), st.live()
	if dc.Observer == nil {
		dc.Observer = m
	}
	del := pluginhost.NewDeliverer(eng, sup.Handler, dc)
	wake := del.Wake
	st.onMembers.Store(&wake)
	return del
}
