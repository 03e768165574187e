package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// Stages lists the pipeline stages the plugins provide, sorted by name,
// each with its Plugin: those a plugin declared in its Info when it last
// started, so a plugin that is restarting or failed still shows what it
// provides (RunStage then says it is not running).
func (s *Supervisor) Stages() []sdk.Stage {
	var out []sdk.Stage
	for name, in := range s.instances {
		for _, st := range in.stages() {
			st.Plugin = name
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// stages are the stages the instance declared when it last started.
func (in *instance) stages() []sdk.Stage {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.info.Stages
}

// RunStage hands call to the plugin that provides stage call.Name and
// returns its output. No provider is sdk.ErrNotFound; a provider that is
// starting or restarting, or that went away during the call, is
// sdk.ErrUnavailable; one that failed for good, or the stage's failure,
// is an error naming the plugin.
func (s *Supervisor) RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
	provider := s.provider(call.Name)
	if provider == "" {
		return nil, fmt.Errorf("%w: no controller plugin of this gateway provides pipeline stage %q; add a plugin that declares it (sdk.Info.Stages) under plugins: in the gateway config", sdk.ErrNotFound, call.Name)
	}
	p, err := s.plugin(provider)
	if errors.Is(err, ErrUnavailable) {
		return nil, fmt.Errorf("%w: pipeline stage %s is provided by plugin %s, which is starting or restarting: %v", sdk.ErrUnavailable, call.Name, provider, err)
	}
	if err != nil {
		return nil, fmt.Errorf("pipeline stage %s is provided by plugin %s, which cannot run it: %w; see flowgate plugins list and the gateway's log", call.Name, provider, err)
	}
	out, err := p.RunStage(ctx, call)
	if errors.Is(err, sdk.ErrPluginShutdown) {
		// The provider went away, not the caller: plugin_shutdown would
		// tell the caller that it is the stale one.
		return nil, fmt.Errorf("%w: stage %s of plugin %s: the plugin went away while running it: %v", sdk.ErrUnavailable, call.Name, provider, err)
	}
	if err != nil {
		return nil, fmt.Errorf("stage %s of plugin %s: %w", call.Name, provider, err)
	}
	return out, nil
}

// provider is the plugin that declares stage, or "" when none does;
// checkStages lets only one plugin declare a stage.
func (s *Supervisor) provider(stage string) string {
	for name, in := range s.instances {
		for _, st := range in.stages() {
			if st.Name == stage {
				return name
			}
		}
	}
	return ""
}

// checkStages refuses the stages the plugin of spec declares in info when one
// has no name, is a built-in stage or is declared by another plugin: a
// mistake in the plugin or in the gateway config, which a restart cannot
// fix.
func (s *Supervisor) checkStages(spec Spec, info sdk.Info) error {
	name := spec.Name
	others := map[string]string{}
	for other, in := range s.instances {
		if other == name {
			continue
		}
		for _, st := range in.stages() {
			others[st.Name] = other
		}
	}
	var bad []string
	for _, st := range info.Stages {
		switch {
		case strings.TrimSpace(st.Name) == "":
			bad = append(bad, "a stage has no name; give each of sdk.Info.Stages a name")
		case flows.IsBuiltinStage(st.Name):
			bad = append(bad, fmt.Sprintf("stage %q is a built-in stage, which a plugin cannot replace; rename the plugin's stage", st.Name))
		case others[st.Name] != "":
			bad = append(bad, fmt.Sprintf("stage %q is already provided by plugin %s; rename one of the two, or configure only one of them", st.Name, others[st.Name]))
		}
	}
	if len(bad) > 0 {
		return &permanentError{err: &ConfigError{Key: spec.Key, Err: fmt.Errorf("plugin %s: %s", name, strings.Join(bad, "; "))}}
	}
	return nil
}
