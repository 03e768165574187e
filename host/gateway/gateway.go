package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/metrics"
	"github.com/flowgate/flowgate/host/notify"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/sdk"
)

// SocketFile is the name of the gateway's API socket inside the home.
const SocketFile = "gateway.sock"

// Config is what a gateway needs. Home is required; zero fields take
// their defaults.
type Config struct {
	// Home is the flowgate home directory.
	Home string
	// File is the loaded config file, if any.
	File FileConfig
	// Logger is the root logger; if nil, logs are discarded.
	Logger hclog.Logger
	// Owner describes the process hosting the gateway, for anyone who
	// finds the store locked. If empty, "flowgate gateway".
	Owner string
	// Launch overrides how shims are started (tests).
	Launch func(dir string, env []string) (*os.Process, error)
	// Shims starts the shims when Launch is nil, keeping one warm while
	// the gateway runs (runner.Config.Shims); nil means those of the
	// running executable.
	Shims *runner.Shims
	// Poll overrides how often running tasks are checked (tests).
	Poll time.Duration
	// Self is the flowgate executable that serves first-party plugins; if
	// empty, the running executable.
	Self string
	// Builtins names the first-party plugins Self serves. Each runs
	// unless the config file names a plugin of the same name itself.
	Builtins []string
	// Controllers are first-party controllers this process runs itself
	// instead of as plugin subprocesses, by name: events of the flows
	// they drive are handed to them directly (pluginhost.InProcess), with
	// no process and no gRPC round trip per call, and a panic blocks only
	// the flow whose event caused it. The CLI passes them for the
	// daemon and for a gateway it hosts for one command. A plugins: entry
	// of the same name with a path or with isolate: true runs it as a
	// plugin process instead, as does a plugin of that name found in
	// plugins_dir; an entry with neither still lends it its env.
	// Each is made when the gateway starts, with a getenv that answers as
	// the environment of the plugin process it replaces would: the
	// entry's env, the home, the stage path and the data directory
	// (FLOWGATE_*), then this process's own.
	Controllers map[string]func(getenv func(string) string) sdk.Controller
	// Supervisor tunes plugin restarts (backoff, budget, timeouts); its
	// Plugins, Self, Logger and LogLevel are filled in from the rest.
	Supervisor pluginhost.SupervisorConfig
	// Delivery tunes event delivery (timeout, failures before a flow is
	// blocked, backoff); its Logger is filled in.
	Delivery pluginhost.DeliveryConfig
	// Store, when its URL is set, is the store to keep the records in,
	// over the config file's store section (--store and its flags).
	Store backend.Spec
	// Solo makes Start refuse an etcd installation that another gateway
	// serves, with an error wrapping ErrAlreadyRunning and etcd.ErrHeld
	// that names it. A command that hosts a gateway for its own duration
	// sets it: joining, it would take the installation's queued tasks
	// and run them on this machine, where they outlive the command.
	Solo bool
}

// Gateway is the host: the store, the engine, the runner and the API
// socket, started and stopped together.
type Gateway struct {
	cfg Config
	log hclog.Logger

	mu    sync.Mutex
	st    *records
	eng   *engine.Engine
	run   *runner.Runner
	sched *scheduler.Scheduler
	sup   *pluginhost.Supervisor
	// parts are the long-running parts, started in order and stopped in
	// reverse (see the package doc).
	parts   *lifecycle.Group
	metrics *metrics.Metrics
	// web is the TCP listener (FileConfig.HTTP), started after the
	// socket and stopped before it; nil when off.
	web *web
	// httpAddr is the TCP listener's address while it serves, read
	// without mu by Status (which a Stop holding mu may be waiting on).
	httpAddr atomic.Pointer[string]
	srv      *http.Server
	ln       net.Listener
	served   chan struct{}
	started  time.Time
	// changes wakes the in-process client's followers at every write.
	changes api.Broadcast
	// logs says where a task's log is (logAt); nil on bbolt.
	logs func(ctx context.Context, gateway string) (runcenter.LogPlace, error)
	// joins is the number of the last member id taken on etcd (join):
	// a rejoin takes the next, so that it adopts its earlier tasks.
	joins int
	// quit ends when Stop is called, so that a rejoin under way gives
	// up; Start makes a new one. stopping guards both, apart from mu,
	// which a rejoin holds while it starts the gateway again.
	stopping sync.Mutex
	quit     context.Context
	quitNow  context.CancelFunc
	// lost hears why the gateway stopped by itself (Lost).
	lost chan error
	// book sends messages to destinations (notices, announcements).
	book *dest.Book
}

// New returns a gateway for cfg; nothing is opened until Start.
func New(cfg Config) (*Gateway, error) {
	if cfg.Home == "" {
		return nil, errors.New("gateway config: Home is required")
	}
	if err := cfg.File.Validate(); err != nil {
		return nil, err
	}
	if cfg.Store.URL != "" {
		if err := cfg.Store.Validate(); err != nil {
			return nil, err
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Owner == "" {
		cfg.Owner = "flowgate gateway"
	}
	book, err := cfg.File.Book(os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("gateway config: %w", err)
	}
	return &Gateway{cfg: cfg, log: cfg.Logger.Named("gateway"), lost: make(chan error, 1), book: book}, nil
}

// SocketPath is where the gateway of home serves its API.
func SocketPath(dir string) string { return filepath.Join(dir, SocketFile) }

// Start opens the store, reattaches to the tasks a previous gateway left
// running, starts its parts (see the package doc), and serves the API
// socket. A second gateway on the same home fails with an error wrapping
// ErrAlreadyRunning that names the running one's pid; when that one is
// still starting (it holds the store, its socket does not answer yet),
// the second waits for it up to StartWait first. A part that cannot
// start fails Start with an error that names it ("start runner: …"); the
// parts already started are stopped, the store is closed, and nothing
// is served.
func (g *Gateway) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.st != nil {
		return nil
	}
	g.stopping.Lock()
	if g.quit == nil || g.quit.Err() != nil {
		g.quit, g.quitNow = context.WithCancel(context.Background())
	}
	g.stopping.Unlock()
	return g.start(ctx)
}

// start is Start with g.mu held and g.st nil.
func (g *Gateway) start(ctx context.Context) error {
	if err := home.Ensure(g.cfg.Home); err != nil {
		return err
	}
	sock := SocketPath(g.cfg.Home)
	if err := g.refuseIfRunning(ctx); err != nil {
		return err
	}
	m := metrics.New(g.cfg.Logger.Named("metrics"))
	onCommit := func(d time.Duration) {
		m.StoreCommitted(d)
		g.changes.Notify()
	}
	sopts := store.Options{Owner: g.cfg.Owner, Logger: g.cfg.Logger.Named("store"), OnCommit: onCommit}
	st, err := g.openRecords(ctx, sopts)
	if err != nil {
		return err
	}
	var (
		run *runner.Runner
		del *pluginhost.Deliverer
		sup *pluginhost.Supervisor
		ntf *notify.Notifier
	)
	eng, err := engine.New(st.Store, engine.Config{
		TaskRetention:  time.Duration(g.cfg.File.Retention.Tasks),
		MaxActiveFlows: g.cfg.File.Limits.MaxActiveFlows,
		Notify: func(c engine.Change) {
			switch c.Kind {
			case engine.EventQueued:
				del.Wake()
			case engine.EventAcked:
				del.Acked(c.FlowID, c.Seq)
			case engine.NoticeQueued:
				ntf.Wake()
			default:
				run.Notify(c)
			}
		},
	})
	if err == nil {
		// The targets were checked with the config; a store that takes
		// no write now (a full disk) keeps the ones recorded before,
		// and must not keep the gateway from starting.
		if nerr := eng.SetControllerNotices(g.controllerNotices()); nerr != nil {
			g.log.Error("recording the controllers' finish notification targets failed; the ones recorded before apply", "error", nerr)
		}
	}
	if err == nil {
		run, err = runner.New(eng, runner.Config{
			Home: g.cfg.Home, MaxRunning: g.cfg.File.Limits.MaxRunning, StageSecretEnv: g.cfg.File.Pipeline.SecretEnv,
			Launch: g.cfg.Launch, Shims: g.cfg.Shims, Poll: g.cfg.Poll, Logger: g.cfg.Logger.Named("runner"),
			FailurePatterns: g.cfg.File.Failures, Diagnoser: g.cfg.File.DiagnoserConfig(), Observer: m,
			Probe: g.cfg.File.ProbeConfig(), Draining: st.draining, Member: st.memberID(), Cluster: st.cluster(g.cfg.Home),
			Departures: st.departures(), Sweep: g.cfg.File.Cluster.sweep(),
			Labels:    g.cfg.File.Cluster.Labels,
			IdleShims: g.cfg.File.Limits.IdleShims, ShimIdleTimeout: time.Duration(g.cfg.File.Limits.ShimIdleTimeout),
		})
		st.runner.Store(run)
	}
	if err == nil {
		sc := g.cfg.Supervisor
		sc.Self, sc.Logger, sc.LogLevel = g.cfg.Self, g.cfg.Logger, g.cfg.File.LogLevel
		sc.DataDir = filepath.Join(g.cfg.Home, home.DataDir)
		if sc.Plugins, sc.Found, sc.InProcess, err = g.pluginSpecs(ctx, sc); err == nil {
			sup, err = pluginhost.NewSupervisor(eng, sc)
		}
	}
	if err == nil {
		err = m.Register(metrics.Sources{Engine: eng, Runner: run, Plugins: sup.Statuses, Space: st.space})
	}
	// abandon undoes a start that failed: it stops the plugins_dir
	// processes the supervisor owns but never ran, and closes the store.
	abandon := func() {
		if sup != nil {
			_ = sup.Stop(ctx)
		}
		st.close(ctx)
	}
	if err != nil {
		abandon()
		return err
	}
	dc := g.cfg.Delivery
	dc.Logger, dc.Member, dc.Live = g.cfg.Logger.Named("events"), st.memberID(), st.live()
	if dc.Observer == nil {
		dc.Observer = m
	}
	del = pluginhost.NewDeliverer(eng, sup.Handler, dc)
	// A member that joins or leaves may free event streams: look now.
	wake := del.Wake
	st.onMembers.Store(&wake)
	ntf = g.notifier(eng, st.cronLeader())
	sched := scheduler.New(eng, scheduler.Config{
		Dests:       dest.CronDests{Book: g.book, Logger: g.cfg.Logger.Named("scheduler")},
		Logger:      g.cfg.Logger.Named("scheduler"),
		SessionsDir: filepath.Join(g.cfg.Home, home.SessionsDir),
		Observer:    m,
		Leader:      st.cronLeader(),
		Member:      st.memberID(),
	})
	// The sweep's passes are quick, which never measure the store file:
	// Space is left to tasks maintenance (client.Maintain).
	pass := g.cfg.File.MaintenanceConfig(g.cfg.Home)
	pass.Mine = st.mine(g.cfg.Home)
	sweep := maintenance.NewSweeper(eng, maintenance.SweepConfig{
		Interval: time.Duration(g.cfg.File.Maintenance.Interval), First: time.Duration(g.cfg.File.Maintenance.First),
		Pass: pass, Logger: g.cfg.Logger.Named("maintenance"),
	})
	if _, _, err := sched.Jobs().Reconcile(g.cfg.File.CronInputs()); err != nil {
		abandon()
		return fmt.Errorf("gateway config cron: %w", err)
	}
	parts := []lifecycle.Named{
		{Name: "runner", Part: run},
		{Name: "plugin supervisor", Part: sup},
		{Name: "event delivery", Part: del},
		{Name: "scheduler", Part: sched},
		{Name: "finish notices", Part: ntf},
	}
	if !g.cfg.File.Maintenance.Disabled {
		parts = append(parts, lifecycle.Named{Name: "maintenance sweep", Part: sweep})
	}
	group, err := lifecycle.StartAll(ctx, parts...)
	if err != nil {
		abandon()
		return fmt.Errorf("gateway: %w", err)
	}
	ln, err := api.Listen(sock)
	if err != nil {
		err = errors.Join(err, group.Stop(ctx))
		st.close(ctx)
		return err
	}
	g.st, g.eng, g.run, g.sched, g.sup, g.parts, g.ln, g.metrics = st, eng, run, sched, sup, group, ln, m
	g.started = time.Now()
	g.logs = g.logAt()
	apiHandler := api.NewHandler(g.client(), g.cfg.Logger.Named("api"))
	g.srv = &http.Server{Handler: g.socketHandler(apiHandler), ReadHeaderTimeout: 10 * time.Second}
	// The run center listens before the socket answers, so the first
	// status a client reads already names its address.
	if err := g.startWeb(ctx, apiHandler); err != nil {
		err = errors.Join(err, ln.Close(), group.Stop(ctx))
		st.close(ctx)
		g.st = nil
		return err
	}
	g.served = make(chan struct{})
	go func() {
		defer close(g.served)
		if err := g.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			g.log.Error("api server", "error", err)
		}
	}()
	g.log.Info("gateway started", "home", g.cfg.Home, "pid", os.Getpid(), "socket", sock, "max_running", run.MaxRunning())
	return nil
}

// Stop stops serving, stops dispatching and following tasks (they keep
// running under their shims for the next gateway), and closes the store.
func (g *Gateway) Stop(ctx context.Context) error {
	g.stopping.Lock()
	if g.quitNow != nil {
		g.quitNow() // a rejoin under way gives up
	}
	g.stopping.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stop(ctx)
}

// stop is Stop with g.mu held.
func (g *Gateway) stop(ctx context.Context) error {
	if g.st == nil {
		return nil
	}
	st := g.st
	err := g.stopParts(ctx)
	if cerr := st.close(ctx); err == nil {
		err = cerr
	}
	return err
}

// stopParts is stop but for the records, which it leaves open: a rejoin
// closes the old ones once the gateway has joined again (see rejoin).
func (g *Gateway) stopParts(ctx context.Context) error {
	var err error
	if g.web != nil {
		g.httpAddr.Store(nil)
		err = g.web.Stop(ctx)
		g.web = nil
	}
	err = errors.Join(err, g.srv.Shutdown(ctx))
	<-g.served
	left := g.run.Running() // the runner forgets its tasks as it stops
	err = errors.Join(err, g.parts.Stop(ctx))
	g.st = nil
	g.log.Info("gateway stopped", "running_tasks_left_to_shims", left)
	return err
}
