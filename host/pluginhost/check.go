package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/filetrust"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// Outcomes of checking one plugin entry.
const (
	// CheckOK: the plugin starts and reports the configured name.
	CheckOK = "ok"
	// CheckError: a mistake that stops a gateway from starting.
	CheckError = "error"
	// CheckSkipped: a file in plugins_dir that a gateway leaves out
	// (it fails the handshake, or its name is taken).
	CheckSkipped = "skipped"
)

// CheckResult is what checking one plugin entry found.
type CheckResult struct {
	// Key is the entry in the gateway config: plugins[i], or
	// plugins_dir for a file found there.
	Key string `json:"key"`
	// Name is the configured name, or the one a plugins_dir file reports.
	Name    string `json:"name,omitempty"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	// Outcome is CheckOK, CheckError or CheckSkipped.
	Outcome string `json:"outcome"`
	// Error says what is wrong and what to do; empty when Outcome is ok.
	Error string `json:"error,omitempty"`
}

// PluginsDirKey is the gateway config key of the plugin directory.
const PluginsDirKey = "plugins_dir"

// Check checks the plugin entries of cfg.Plugins and the files of the
// plugin directory dir (none when empty) as a gateway's start does, with
// no gateway: each entry's fields, path and sha256, then a brief start of
// the plugin for its handshake and name, which is shut down at once (its
// host callbacks are refused). Entries are checked one after another, in
// config order, then the directory's files by name.
func Check(ctx context.Context, cfg SupervisorConfig, dir string) []CheckResult {
	cfg = cfg.withDefaults()
	var out []CheckResult
	taken := map[string]bool{}
	for _, spec := range keyed(cfg.Plugins) {
		r := CheckResult{Key: spec.Key, Name: spec.Name, Path: spec.Path, Outcome: CheckOK}
		var (
			info sdk.Info
			err  error
		)
		if taken[spec.Name] {
			err = spec.namedTwice()
		} else {
			info, err = Probe(ctx, cfg, spec)
		}
		taken[spec.Name] = true
		r.Version = info.Version
		if err != nil {
			r.Outcome, r.Error = CheckError, err.Error()
		}
		out = append(out, r)
	}
	if dir == "" {
		return out
	}
	found, skipped, err := ScanDir(ctx, cfg, dir, taken)
	if err != nil {
		return append(out, CheckResult{Key: PluginsDirKey, Path: dir, Outcome: CheckError, Error: err.Error()})
	}
	for _, f := range found {
		out = append(out, CheckResult{Key: f.Spec.Key, Name: f.Spec.Name, Path: f.Spec.Path, Version: f.Info.Version, Outcome: CheckOK})
	}
	return append(out, skipped...)
}

// Probe starts the plugin of spec as a gateway's start does, checks it
// (the entry's fields, its path and sha256, the handshake, the name it
// reports and its API version), and shuts it down. It returns what the
// plugin reports, or the first mistake: a *ConfigError naming the entry's
// key for a config mistake. The plugin's host callbacks are refused with
// sdk.ErrPluginShutdown; it gets no events. A spec with no name takes the
// name the plugin reports.
func Probe(ctx context.Context, cfg SupervisorConfig, spec Spec) (sdk.Info, error) {
	cfg = cfg.withDefaults()
	p, info, err := prestart(ctx, cfg, spec)
	if err != nil {
		return sdk.Info{}, err
	}
	p.stop(cfg.ShutdownTimeout)
	return info, nil
}

// prestarted is a plugin process started and checked before a supervisor
// runs it (see Probe and FindDir). Its callbacks are refused, as a
// probe's are, until a supervisor adopts the process and binds its own
// host to conn (pluginclient.Plugin.BindHost).
type prestarted struct {
	client *plugin.Client
	conn   pluginclient.Plugin
	info   sdk.Info
	pid    int
	log    hclog.Logger
}

// prestart starts and checks the plugin of spec as Probe does, and
// leaves it running. cfg has its defaults.
func prestart(ctx context.Context, cfg SupervisorConfig, spec Spec) (*prestarted, sdk.Info, error) {
	cfg, err := cfg.withSelf()
	if err != nil {
		return nil, sdk.Info{}, err
	}
	if spec.Name != "" {
		if err := spec.Validate(); err != nil {
			return nil, sdk.Info{}, err
		}
	}
	if err := spec.checkFile(); err != nil {
		return nil, sdk.Info{}, err
	}
	log := cfg.Logger.Named("plugin." + logName(spec))
	refusing := &host{name: logName(spec), live: func(int64) bool { return false }, log: logTo(log)}
	client, conn, info, err := cfg.dial(ctx, spec, log, refusing)
	if err != nil {
		return nil, sdk.Info{}, err
	}
	p := &prestarted{client: client, conn: conn, info: info, log: log}
	if rc := client.ReattachConfig(); rc != nil {
		p.pid = rc.Pid
	}
	return p, info, nil
}

// stop shuts the process down as a supervisor's stop does: Shutdown,
// waiting at most timeout, then a kill of its process group.
func (p *prestarted) stop(timeout time.Duration) {
	in := &instance{client: p.client, conn: p.conn, pid: p.pid}
	in.shutdown(timeout, p.log)
}

// logName is the spec's name, or its file's for an unnamed one.
func logName(spec Spec) string {
	if spec.Name != "" {
		return spec.Name
	}
	return filepath.Base(spec.Path)
}

// Found is a plugin ScanDir or FindDir found: its entry, named by what it
// reported.
type Found struct {
	Spec Spec
	Info sdk.Info
	// run is its process, left running by FindDir for a supervisor to
	// adopt (SupervisorConfig.Found); nil from ScanDir.
	run *prestarted
}

// ScanDir finds the plugins in dir: every file in it, by name (hidden
// files left out), that passes Probe, as an entry with Key plugins_dir
// and the name the plugin reports. The files that do not (not
// executable, failing the handshake, speaking another API version, or
// reporting a name that taken or an earlier file already has) are
// returned as skipped, each with why; a gateway logs and leaves them out.
// It fails, with a *ConfigError naming plugins_dir, only when dir cannot
// be read.
func ScanDir(ctx context.Context, cfg SupervisorConfig, dir string, taken map[string]bool) ([]Found, []CheckResult, error) {
	return scanDir(ctx, cfg, dir, taken, false)
}

// FindDir is ScanDir for a gateway's start: each plugin found is left
// running, so that it is started once, and the supervisor made with it
// in SupervisorConfig.Found runs that process as its first instance
// (NewSupervisor stops them all when it fails; Stop stops those Start
// never ran).
func FindDir(ctx context.Context, cfg SupervisorConfig, dir string, taken map[string]bool) ([]Found, []CheckResult, error) {
	return scanDir(ctx, cfg, dir, taken, true)
}

// scanDir is ScanDir, leaving the plugins found running when keep is
// set.
func scanDir(ctx context.Context, cfg SupervisorConfig, dir string, taken map[string]bool, keep bool) ([]Found, []CheckResult, error) {
	cfg = cfg.withDefaults()
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("the plugin directory %s does not exist; create it, or fix or remove plugins_dir", dir)
		}
		return nil, nil, &ConfigError{Key: PluginsDirKey, Err: err}
	}
	// Whoever can write to the directory chooses what the gateway runs.
	if err := filetrust.Trusted(dir); err != nil {
		return nil, nil, &ConfigError{Key: PluginsDirKey, Err: fmt.Errorf("refused to run the plugins in it: %w", err)}
	}
	names := map[string]bool{}
	for n := range taken {
		names[n] = true
	}
	var (
		found   []Found
		skipped []CheckResult
	)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		spec := Spec{Path: filepath.Join(dir, e.Name()), Key: PluginsDirKey}
		p, info, err := prestart(ctx, cfg, spec)
		if err == nil && (names[info.Name] || !keep) {
			p.stop(cfg.ShutdownTimeout)
			p = nil
		}
		if err == nil && names[info.Name] {
			err = fmt.Errorf("its name %q is taken by another plugin; rename one of them", info.Name)
		}
		if err != nil {
			skipped = append(skipped, CheckResult{Key: PluginsDirKey, Name: info.Name, Path: spec.Path, Outcome: CheckSkipped, Error: err.Error()})
			continue
		}
		names[info.Name] = true
		spec.Name = info.Name
		found = append(found, Found{Spec: spec, Info: info, run: p})
	}
	return found, skipped, nil
}
