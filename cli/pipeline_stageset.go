package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins/pipeline"
)

// stageSet is what `pipeline validate` and `pipeline run --dry-run` check
// a pipeline's stage names against: the built-in stages, the executables
// on the home's stage path, and the stages the running gateway's plugins
// provide.
type stageSet struct {
	// commands are the names a stage may use, listed once.
	commands pipeline.CommandSet
	// plugins are the gateway's plugins; gateway says one answered.
	plugins []api.PluginStatus
	gateway bool
	// secretEnv is the config's pipeline.secret_env, the variables a
	// model stage's --secret-env may name.
	secretEnv []string
}

// stageSet reads the home's stage options and asks the home's gateway,
// when one runs, for its plugins' stages; it never starts one.
func (e *env) stageSet(ctx context.Context) (stageSet, error) {
	opts, err := e.stageOptions()
	if err != nil {
		return stageSet{}, err
	}
	dir, err := e.home()
	if err != nil {
		return stageSet{}, err
	}
	s := stageSet{secretEnv: opts.SecretEnv}
	c, err := gateway.Dial(dir, gateway.StartWait)
	if errors.Is(err, api.ErrNoGateway) {
		s.commands = opts.Commands()
		return s, nil
	}
	if err != nil {
		return stageSet{}, err
	}
	defer c.Close()
	ps, err := c.Plugins(ctx)
	if err != nil {
		return stageSet{}, err
	}
	s.plugins, s.gateway = ps, true
	for _, p := range ps {
		if p.State == api.PluginRunning {
			for _, st := range p.Stages {
				st.Plugin = p.Name
				opts.PluginStages = append(opts.PluginStages, st)
			}
		}
	}
	s.commands = opts.Commands()
	return s, nil
}

// has reports whether a stage may name the command.
func (s stageSet) has(name string) bool { return s.commands.Has(name) }

// refuse is the usage error for err, about stage name that nothing
// available provides: which plugin provides it and why it cannot run, or
// how to add it.
func (s stageSet) refuse(err error, name string) error {
	for _, p := range s.plugins {
		for _, st := range p.Stages {
			if st.Name == name {
				why := "state " + string(p.State)
				if p.LastError != "" {
					why += ", last error: " + p.LastError
				}
				return usageError{fmt.Errorf("%w (stage %s is provided by controller plugin %s, which is not running (%s); see flowgate plugins list and the gateway's log)", err, name, p.Name, why)}
			}
		}
	}
	hint := pipeline.MissingStageHint(name)
	if !s.gateway {
		hint += "; no gateway is running, so the stages of controller plugins are unknown: start flowgate gateway first if a plugin provides " + name
	} else if names := s.pluginNames(); names != "" {
		hint += "; the gateway's plugins are " + names
	}
	return usageError{fmt.Errorf("%w (%s)", err, hint)}
}

func (s stageSet) pluginNames() string {
	names := make([]string, len(s.plugins))
	for i, p := range s.plugins {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
