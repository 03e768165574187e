package gateway

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/flowgate/flowgate/host/metrics"
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
	// store is the part that opened st; a rejoin takes st from it to
	// close later (storePart.release).
	store *storePart
	// parts are the long-running parts, the store first and the socket
	// last, started in order and stopped in reverse (see the package
	// doc).
	parts   *lifecycle.Group
	metrics *metrics.Metrics
	// httpAddr is the TCP listener's address while it serves, read
	// without mu by Status (which a Stop holding mu may be waiting on).
	httpAddr atomic.Pointer[string]
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
// start fails Start with an error that names it ("gateway: runner:
// start: …"); the parts already started are stopped in reverse order,
// the store last, and nothing is served.
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

// start is Start with g.mu held and g.st nil. It reads as the list of
// the gateway's parts: the store, what is built over it, the listeners
// of the engine's changes in the order they hear them, then the parts
// in the order they start (the package doc says why this one).
func (g *Gateway) start(ctx context.Context) (err error) {
	if err := home.Ensure(g.cfg.Home); err != nil {
		return err
	}
	if err := g.refuseIfRunning(ctx); err != nil {
		return err
	}
	// The one undo path: whatever fails below, every part started so
	// far stops, in reverse order, the store last, and nothing serves.
	parts := &lifecycle.Group{}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("gateway: %w", err), parts.Stop(ctx))
			g.st = nil
		}
	}()
	m := metrics.New(g.cfg.Logger.Named("metrics"))
	g.store = g.newStore(m)
	if err := parts.Start(ctx, lifecycle.Named{Name: "store", Part: g.store}); err != nil {
		return err
	}
	st := g.store.rec
	eng, err := g.newEngine(st, m)
	if err != nil {
		return err
	}
	run, err := g.newRunner(eng, st, m)
	if err != nil {
		return err
	}
	sched, err := g.newScheduler(eng, st, m)
	if err != nil {
		return err
	}
	// Built last of what can fail: from here the supervisor owns the
	// plugins_dir processes, which only its Stop, in the group, ends.
	sup, err := g.newSupervisor(ctx, eng)
	if err != nil {
		return err
	}
	del := g.newDeliverer(eng, sup, st, m)
	ntf := g.notifier(eng, st.cronLeader())
	eng.Listen("runner", run)
	eng.StartAtCreation(run)
	eng.Listen("event delivery", del)
	eng.Listen("finish notices", ntf)
	eng.Listen("metrics", m)
	work := append([]lifecycle.Named{{Name: "runner", Part: run}, {Name: "plugin supervisor", Part: sup},
		{Name: "event delivery", Part: del}, {Name: "scheduler", Part: sched}, {Name: "finish notices", Part: ntf}},
		g.newSweeper(eng, st)...)
	if err := parts.Start(ctx, work...); err != nil {
		return err
	}
	if err := m.Register(metrics.Sources{Engine: eng, Runner: run, Plugins: sup.Statuses, Space: st.space, Writer: st.writer}); err != nil {
		return err
	}
	g.st, g.eng, g.run, g.sched, g.sup, g.parts, g.metrics = st, eng, run, sched, sup, parts, m
	g.started, g.logs = time.Now(), g.logAt()
	apiHandler := api.NewHandler(g.client(), g.cfg.Logger.Named("api"))
	// The web listener serves before the socket answers, so the first
	// status a client reads already names its address.
	serve, err := g.newWeb(apiHandler)
	if err != nil {
		return err
	}
	sock := &socket{path: SocketPath(g.cfg.Home), handler: g.socketHandler(apiHandler), log: g.log}
	if err := parts.Start(ctx, append(serve, lifecycle.Named{Name: "socket", Part: sock})...); err != nil {
		return err
	}
	g.log.Info("gateway started", "home", g.cfg.Home, "pid", os.Getpid(), "socket", sock.path, "max_running", run.MaxRunning())
	return nil
}

// StoreWriter returns what the store's one writer has done since this
// gateway opened it (see store.WriterStats), for flowgate bench; false
// when the gateway is stopped or its store is not a bbolt file.
func (g *Gateway) StoreWriter() (store.WriterStats, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.st == nil || g.st.writer == nil {
		return store.WriterStats{}, false
	}
	return g.st.writer(), true
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

// stop is Stop with g.mu held: it stops the parts in reverse order, the
// socket first and the store last.
func (g *Gateway) stop(ctx context.Context) error {
	if g.st == nil {
		return nil
	}
	left := g.run.Running() // the runner forgets its tasks as it stops
	err := g.parts.Stop(ctx)
	g.st = nil
	g.log.Info("gateway stopped", "running_tasks_left_to_shims", left)
	return err
}
