package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// pluginCommands are the stages other controller plugins provide
// (sdk.Stage), as the gateway listed them for this pass. Each runs
// through the gateway (sdk.Host.RunStage) the first time, and its output
// is recorded in the flow's state and made durable before the pipeline
// goes on, as the state stages' are: a later pass (after a gate, a task,
// or a gateway killed and restarted) gives the recorded output and never
// runs the stage again. Only a gateway killed between the stage's answer
// and that write runs it again, with the same sdk.StageCall.Key.
func (p *pipe) pluginCommands() []*flows.Command {
	cmds := make([]*flows.Command, len(p.r.plugStages))
	for i, st := range p.r.plugStages {
		cmds[i] = &flows.Command{Name: st.Name, Description: st.Description, SideEffects: st.SideEffects, Plugin: st.Plugin,
			Run: func(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
				return p.runPluginStage(ctx, st, call)
			}}
	}
	return cmds
}

// loadPluginStages asks the gateway for the stages plugins provide, once
// per pass, and only when a stage of the pipeline is neither built in
// nor on the stage path, or is commands.list: pure pipelines make no
// call.
func (r *run) loadPluginStages(ctx context.Context, stages []flows.Stage) error {
	if r.plugStages != nil || r.host == nil {
		return nil
	}
	local := (&pipe{r: r}).commands()
	need := false
	for _, st := range stages {
		if _, ok := local[st.Name]; !ok || st.Name == "commands.list" {
			need = true
		}
	}
	if !need {
		return nil
	}
	st, err := r.host.ListStages(ctx)
	if err != nil {
		return fmt.Errorf("list the stages the gateway's plugins provide: %w", err)
	}
	r.plugStages = append([]sdk.Stage{}, st...)
	return nil
}

func (p *pipe) runPluginStage(ctx context.Context, st sdk.Stage, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	input := call.Items
	if input == nil {
		input = []any{}
	}
	items, err := json.Marshal(input)
	if err != nil {
		return flows.StageOutput{}, err
	}
	args, err := json.Marshal(call.Args)
	if err != nil {
		return flows.StageOutput{}, err
	}
	out, err := p.r.host.RunStage(ctx, sdk.StageCall{FlowID: p.r.flow.ID, Key: p.outputKey(call), Name: st.Name, Args: args, Items: items})
	if errors.Is(err, sdk.ErrPluginShutdown) || errors.Is(err, sdk.ErrUnavailable) {
		// This instance is going away, or the stage's plugin is
		// restarting: the pass ends, and its event comes again.
		p.hostErr = err
		return flows.StageOutput{}, errStageWaits
	}
	if err != nil {
		return flows.StageOutput{}, err // the gateway's message names the stage and its plugin
	}
	res := []any{}
	if strings.TrimSpace(string(out)) != "" {
		if res, err = execItems(string(out), true); err != nil {
			return flows.StageOutput{}, fmt.Errorf("stage %s (plugin %s) answered output that is not JSON; the plugin must return a JSON value: %w", st.Name, st.Plugin, err)
		}
	}
	rec := p.record(call, res)
	if err := p.r.save(ctx, p.id); err != nil {
		p.hostErr = err // the pass ends; its event comes again, and runs the stage again
		return flows.StageOutput{}, errStageWaits
	}
	return rec, nil
}
