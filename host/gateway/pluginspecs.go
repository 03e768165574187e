package gateway

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
)

// pluginSpecs is the configured plugins, then the first-party ones
// neither they nor the plugins found in the plugin directory (returned
// second, still running: see pluginsDir) name, then the controllers that
// run in this process (see inProcess), whose entries it leaves out of the
// plugins. A first-party plugin (one flowgate serves itself, with no
// path) is told firstPartyEnv, unless its entry sets the same variables.
func (g *Gateway) pluginSpecs(ctx context.Context, sc pluginhost.SupervisorConfig) ([]pluginhost.Spec, []pluginhost.Found, map[string]sdk.Controller, error) {
	var specs []pluginhost.Spec
	named := map[string]bool{}
	inProcess := map[string]pluginhost.Spec{}
	for _, s := range g.cfg.File.PluginSpecs() {
		named[s.Name] = true
		if _, first := g.cfg.Controllers[s.Name]; first && s.Path == "" && !s.Isolate {
			inProcess[s.Name] = s
			continue
		}
		specs = append(specs, s)
	}
	found, err := g.pluginsDir(ctx, sc, named)
	if err != nil {
		return nil, nil, nil, err
	}
	for name := range g.cfg.Controllers {
		if !named[name] {
			inProcess[name] = pluginhost.Spec{Name: name}
		}
	}
	for _, b := range g.cfg.Builtins {
		if _, in := inProcess[b]; !named[b] && !in {
			specs = append(specs, pluginhost.Spec{Name: b})
		}
	}
	firstParty := g.firstPartyEnv()
	for i, s := range specs {
		if s.Path != "" {
			continue
		}
		env := maps.Clone(firstParty)
		maps.Copy(env, s.Env)
		specs[i].Env = env
	}
	return specs, found, g.inProcess(inProcess), nil
}

// pluginsDir is the plugins of the config's plugins_dir that pass the
// handshake and whose names are not in named (which it extends), left
// running for the supervisor (pluginhost.FindDir); it logs every file it
// skips, and why. It fails only when the directory cannot be read.
func (g *Gateway) pluginsDir(ctx context.Context, sc pluginhost.SupervisorConfig, named map[string]bool) ([]pluginhost.Found, error) {
	dir := g.cfg.File.PluginsDir
	if dir == "" {
		return nil, nil
	}
	found, skipped, err := pluginhost.FindDir(ctx, sc, dir, named)
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		g.log.Warn("plugins_dir: skipped a file that is not a plugin this gateway can run", "path", s.Path, "why", s.Error)
	}
	for _, f := range found {
		g.log.Info("plugins_dir: found a plugin", "name", f.Spec.Name, "path", f.Spec.Path, "version", f.Info.Version)
		named[f.Spec.Name] = true
	}
	return found, nil
}

// stagePathEnv is the variable that gives first-party plugins the
// config's stage_path (the pipeline controller's StagePathEnv).
const stagePathEnv = "FLOWGATE_STAGE_PATH"

// The variables that give the pipeline controller the config's
// pipeline: section (its LLMBaseURLEnv, LLMModelEnv, StageSecretEnvEnv).
const (
	llmBaseURLEnv     = "FLOWGATE_LLM_BASE_URL"
	llmModelEnv       = "FLOWGATE_LLM_MODEL"
	stageSecretEnvEnv = "FLOWGATE_STAGE_SECRET_ENV"
)

// controllerNotices is where the finish notifications of each configured
// controller's flows go.
func (g *Gateway) controllerNotices() map[string]*sdk.FinishNotify {
	m := map[string]*sdk.FinishNotify{}
	for _, s := range g.cfg.File.Plugins {
		if to := s.FinishNotify(); to != nil {
			m[s.Name] = to
		}
	}
	return m
}

// firstPartyEnv is what a first-party controller is told, as a plugin
// process or in this one: the home (FLOWGATE_HOME), the stage path
// (FLOWGATE_STAGE_PATH), the data directory (FLOWGATE_DATA_DIR), and on
// etcd FLOWGATE_SHARED_STORE, and the model stages' defaults and the
// variables they may name (the pipeline controller's
// LLMBaseURLEnv, LLMModelEnv and StageSecretEnvEnv). The pipeline controller keeps state.set
// values under the home, finds executable stages on the path, and keeps
// large values in the data directory, or in the store when it is shared.
func (g *Gateway) firstPartyEnv() map[string]string {
	env := map[string]string{
		home.EnvVar:    g.cfg.Home,
		stagePathEnv:   strings.Join(g.cfg.File.StagePath, string(os.PathListSeparator)),
		sdk.DataDirEnv: filepath.Join(g.cfg.Home, home.DataDir),
	}
	if g.storeSpec().IsEtcd() {
		env[sdk.SharedStoreEnv] = "1"
	}
	pc := g.cfg.File.Pipeline
	env[llmBaseURLEnv], env[llmModelEnv] = pc.LLM.BaseURL, pc.LLM.Model
	env[stageSecretEnvEnv] = strings.Join(pc.SecretEnv, ",")
	return env
}

// inProcess makes the controllers of Config.Controllers that entries
// names, each with a getenv that answers its entry's env, then
// firstPartyEnv, then this process's environment, as the environment of
// its plugin process would.
func (g *Gateway) inProcess(entries map[string]pluginhost.Spec) map[string]sdk.Controller {
	cs := map[string]sdk.Controller{}
	for name, entry := range entries {
		env := g.firstPartyEnv()
		maps.Copy(env, entry.Env)
		getenv := func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return os.Getenv(k)
		}
		cs[name] = g.cfg.Controllers[name](getenv)
	}
	return cs
}
