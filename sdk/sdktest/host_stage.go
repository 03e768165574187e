package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/flowgate/flowgate/sdk"
)

// StageFunc runs a stage a test provides with Host.ProvideStage.
type StageFunc func(ctx context.Context, call sdk.StageCall) (json.RawMessage, error)

// providedStage is a stage the test plays another plugin for.
type providedStage struct {
	stage sdk.Stage
	run   StageFunc
}

// ProvideStage plays a plugin that provides stage st (st.Plugin is its
// name; if empty, "sdktest-stages"): ListStages lists it, and RunStage of
// its name calls run, as the gateway calls the providing plugin. A second
// stage of the same name replaces the first.
func (h *Host) ProvideStage(st sdk.Stage, run StageFunc) {
	if st.Plugin == "" {
		st.Plugin = "sdktest-stages"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stages == nil {
		h.stages = map[string]providedStage{}
	}
	h.stages[st.Name] = providedStage{stage: st, run: run}
}

// ListStages implements sdk.Host: the stages given to ProvideStage,
// sorted by name.
func (h *Host) ListStages(ctx context.Context) ([]sdk.Stage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]sdk.Stage, 0, len(h.stages))
	for _, p := range h.stages {
		out = append(out, p.stage)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RunStage implements sdk.Host by the gateway's rules: the flow must
// exist, and a stage no ProvideStage gave is sdk.ErrNotFound. The stage's
// function runs without the Host's lock held.
func (h *Host) RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	_, err := h.loadFlow(call.FlowID)
	p, ok := h.stages[call.Name]
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: no plugin provides pipeline stage %q; give it to the test Host with ProvideStage", sdk.ErrNotFound, call.Name)
	}
	return p.run(ctx, call)
}
