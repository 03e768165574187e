package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// SupervisorConfig tunes a Supervisor. Zero fields take their defaults.
type SupervisorConfig struct {
	Plugins []Spec
	// Self is the flowgate executable, which serves first-party plugins.
	// If empty, os.Executable.
	Self string
	// Logger is the parent of every plugin's logger ("plugin.NAME").
	Logger hclog.Logger
	// StartTimeout bounds each step of a plugin's start: the handshake,
	// Setup and GetInfo. If zero, 10s.
	StartTimeout time.Duration
	// Backoff and MaxBackoff space restarts: Backoff·2^(n-1), capped. If
	// zero, 500ms and 30s.
	Backoff, MaxBackoff time.Duration
	// RestartBudget is how many restarts within RestartWindow are allowed
	// before the plugin is left failed. If zero, 10 in 10 minutes.
	RestartBudget int
	RestartWindow time.Duration
	// ShutdownTimeout bounds the Shutdown call at stop, before the kill.
	// If zero, 2s.
	ShutdownTimeout time.Duration
	// LogLevel is passed to plugins (FLOWGATE_LOG_LEVEL). If empty, info.
	LogLevel string
	// WrapHost, if set, wraps the sdk.Host each plugin instance is
	// served; the conformance harness (flowgate plugins test) records and
	// perturbs a plugin's calls with it. If nil, an instance is served the
	// gateway's host as it is.
	WrapHost func(controller string, h sdk.Host) sdk.Host
	// DataDir is passed to plugins (sdk.DataDirEnv): where controllers
	// keep flows' large values. If empty, plugins get none.
	DataDir string
	// Found are plugins of plugins_dir that FindDir left running: each
	// is run as Plugins are, its first instance being the process FindDir
	// started, so a file is started once. The supervisor owns them.
	Found []Found
	// InProcess are controllers run in this process instead of as
	// plugins, by name (see InProcess): no process is started for them,
	// they never restart, their Shutdown is not called (they live as long
	// as the process), and Statuses lists them as running in this
	// process. A name must not also be in Plugins.
	InProcess map[string]sdk.Controller
}

func (c SupervisorConfig) withDefaults() SupervisorConfig {
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 10 * time.Second
	}
	if c.Backoff == 0 {
		c.Backoff = 500 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.RestartBudget == 0 {
		c.RestartBudget = 10
	}
	if c.RestartWindow == 0 {
		c.RestartWindow = 10 * time.Minute
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 2 * time.Second
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	return c
}

// Supervisor runs the configured controller plugins as go-plugin
// subprocesses, each in its own process group, restarts them with backoff
// when they die, and hands their live instance to event delivery. Every
// instance has an epoch; callbacks from an older one are refused.
type Supervisor struct {
	eng *engine.Engine
	cfg SupervisorConfig
	log hclog.Logger

	life   lifecycle.Service
	epochs atomic.Int64
	// instances is fixed by NewSupervisor; each instance guards itself.
	instances map[string]*instance
	// stagesMu orders the checks of the stages plugins declare.
	stagesMu sync.Mutex
	// inProcess are the handlers of cfg.InProcess, by name; fixed by
	// NewSupervisor, as is since, when they became available.
	inProcess map[string]Handler
	since     time.Time
}

// instance is the current process of one plugin.
type instance struct {
	spec Spec

	mu        sync.Mutex
	state     State
	epoch     int64
	client    *plugin.Client
	conn      pluginclient.Plugin
	info      sdk.Info
	pid       int
	restarts  int
	starts    []time.Time
	lastError string
	// lastStart is how the last failed start ended, when lastError is
	// one (nil otherwise).
	lastStart *StartError
	since     time.Time

	// stopKeeping ends the goroutine that keeps this plugin running
	// (keepInBackground), and kept is closed once it has returned.
	stopKeeping context.CancelFunc
	kept        chan struct{}
	// reloading is true while Reload replaces the plugin's process.
	reloading bool
	// reloadMu lets one Reload at a time replace the process.
	reloadMu sync.Mutex
	// adopt is the process FindDir started, which the first launch runs
	// instead of starting another; nil once taken.
	adopt *prestarted
	// watchFailed receives the error that ended the current instance's
	// Watch (see watch); wait ends the instance on it.
	watchFailed chan error
	// watch is the current instance's Status.Watch.
	watch string
}

// NewSupervisor returns a supervisor for cfg.Plugins; it fails with a
// *ConfigError naming the entry's key on an invalid or duplicate entry,
// on a path that does not name an executable, or on an executable whose
// SHA-256 is not its entry's sha256.
func NewSupervisor(eng *engine.Engine, cfg SupervisorConfig) (*Supervisor, error) {
	cfg = cfg.withDefaults()
	cfg.Plugins = keyed(cfg.Plugins)
	s := &Supervisor{eng: eng, cfg: cfg, log: cfg.Logger.Named("plugins"), instances: map[string]*instance{}}
	s.life.Name = "plugin supervisor"
	err := s.addInstances()
	if err == nil {
		s.cfg, err = s.cfg.withSelf()
	}
	if err == nil {
		s.inProcess, err = s.inProcessHandlers()
	}
	if err != nil {
		for _, f := range cfg.Found {
			f.run.stop(cfg.ShutdownTimeout)
		}
		return nil, err
	}
	return s, nil
}

// Start launches every plugin; each is then kept running in the
// background until Stop. A plugin with a path is launched before Start
// returns (waiting at most StartTimeout for it), so that a config mistake
// stops the gateway at once: Start fails with the *ConfigError, naming
// the entry's key and the fix, when the executable does not match its
// sha256 or reports a name other than the configured one. A plugin that
// fails to start for any other reason does not fail Start: its state says
// why, and it is retried. Starting a started supervisor does nothing.
func (s *Supervisor) Start(ctx context.Context) error {
	return s.life.Start(ctx, func(context.Context) error {
		firsts := map[*instance]chan error{}
		for _, in := range s.instances {
			var first chan error
			if in.spec.Path != "" {
				first = make(chan error, 1)
				firsts[in] = first
			}
			s.keepInBackground(in, first)
		}
		var mistakes []error
		for _, first := range firsts {
			err := <-first
			if _, mistake := errors.AsType[*ConfigError](err); mistake {
				mistakes = append(mistakes, err)
			}
		}
		// On a mistake, the failed Start stops every plugin it began.
		return errors.Join(mistakes...)
	})
}

// pluginLog is the logger of one plugin ("plugin.NAME").
func (s *Supervisor) pluginLog(in *instance) hclog.Logger {
	return s.cfg.Logger.Named("plugin." + in.spec.Name)
}

// Stop asks every plugin to shut down, waits ShutdownTimeout, then kills
// what is left (its whole process group). It returns when every plugin is
// down, or with an error naming the supervisor when ctx ends first. It
// also stops the processes of SupervisorConfig.Found that no Start ran,
// so a gateway whose start failed calls it even when Start was not.
// Stopping a stopped supervisor does nothing.
func (s *Supervisor) Stop(ctx context.Context) error {
	err := s.life.Stop(ctx)
	for _, in := range s.instances {
		if p := in.takeAdopted(); p != nil {
			p.stop(s.cfg.ShutdownTimeout) // a plugins_dir process no Start ran
		}
	}
	return err
}

// Handler returns the live instance of controller name, for delivery: a
// controller of InProcess, or the plugin's current instance.
func (s *Supervisor) Handler(name string) (Handler, error) {
	if h, ok := s.inProcess[name]; ok {
		return h, nil
	}
	p, err := s.plugin(name)
	if err != nil {
		return nil, err
	}
	if in := s.instances[name]; slices.Contains(in.capabilities(), sdk.CapabilityFoldTaskFinished) {
		return foldingPlugin{p}, nil
	}
	return p, nil
}

// foldingPlugin is a plugin instance whose Info declared
// sdk.CapabilityFoldTaskFinished.
type foldingPlugin struct{ pluginclient.Plugin }

func (foldingPlugin) foldsTaskFinished() bool { return true }

// capabilities are what the instance declared when it last started.
func (in *instance) capabilities() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.info.Capabilities
}

// plugin returns the connection to the live instance of plugin name, or
// an error that says why there is none (ErrUnavailable while it starts or
// restarts).
func (s *Supervisor) plugin(name string) (pluginclient.Plugin, error) {
	in := s.instances[name]
	if in == nil {
		return nil, fmt.Errorf("no plugin named %q is configured in the gateway config (plugins:)", name)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.state != StateRunning || in.conn == nil {
		msg := fmt.Sprintf("controller %s is not running (state %s", name, in.state)
		if in.lastError != "" {
			msg += ", last error: " + in.lastError
		}
		msg += ")"
		// Starting, waiting to restart, or running with its connection
		// just gone (the exit is being handled): it comes back by itself.
		if in.state == StateStarting || in.state == StateBackoff || in.state == StateRunning || in.reloading {
			return nil, fmt.Errorf("%w: %s", ErrUnavailable, msg)
		}
		return nil, errors.New(msg)
	}
	return in.conn, nil
}

// Statuses describes every plugin, by name.
func (s *Supervisor) Statuses() []Status {
	pending, err := s.eng.PendingEvents()
	if err != nil {
		s.log.Warn("count pending events", "error", err)
	}
	out := make([]Status, 0, len(s.instances))
	for name, in := range s.instances {
		in.mu.Lock()
		st := Status{Name: name, Version: in.info.Version, State: in.state, PID: in.pid, Restarts: in.restarts,
			Epoch: in.epoch, LastError: in.lastError, Since: in.since, Pending: pending[name], Stages: in.info.Stages, Watch: in.watch}
		if in.lastStart != nil {
			st.Exit, st.Stderr = in.lastStart.Exit, in.lastStart.Stderr
		}
		out = append(out, st)
		in.mu.Unlock()
	}
	out = append(out, s.inProcessStatuses(pending)...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// live reports whether epoch is the current instance of its plugin.
func (in *instance) live(epoch int64) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.epoch == epoch && in.state == StateRunning
}

// fail is set after a failed launch or run, keeping err's *StartError
// (nil when it has none) for Statuses.
func (in *instance) fail(state State, err error, errText string) {
	var started *StartError
	errors.As(err, &started)
	in.mu.Lock()
	in.lastStart = started
	in.mu.Unlock()
	in.set(state, errText)
}

func (in *instance) set(state State, errText string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.state, in.since = state, time.Now()
	if errText != "" {
		in.lastError = errText
	}
}
