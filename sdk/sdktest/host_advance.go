package sdktest

import (
	"context"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// Advance implements sdk.Host as the engine does, all or nothing: the
// flow at the expected revision takes the update (flowrule.Update; not
// written when it sets no field), then each task is created as CreateTask
// creates it. Every check is made before anything changes.
func (h *Host) Advance(ctx context.Context, flowID string, expected int64, a sdk.AdvanceRequest) (sdk.AdvanceResult, error) {
	if err := ctx.Err(); err != nil {
		return sdk.AdvanceResult{}, err
	}
	if err := checkJSON("state", a.Update.State); err != nil {
		return sdk.AdvanceResult{}, err
	}
	if err := checkJSON("wait", a.Update.Wait); err != nil {
		return sdk.AdvanceResult{}, err
	}
	reqs, err := flowrule.AdvanceTasks(flowID, a)
	if err != nil {
		return sdk.AdvanceResult{}, err
	}
	for i := range reqs {
		if reqs[i], err = normalTask(reqs[i]); err != nil {
			return sdk.AdvanceResult{}, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.expect(flowID, expected)
	if err != nil {
		return sdk.AdvanceResult{}, err
	}
	res := sdk.AdvanceResult{Flow: f, Tasks: make([]*sdk.Task, len(reqs)), Created: make([]bool, len(reqs))}
	for i, req := range reqs {
		if res.Tasks[i], err = h.idempotent(req); err != nil {
			return sdk.AdvanceResult{}, err
		}
		if res.Tasks[i] == nil {
			if err := acceptsTasks(f); err != nil {
				return sdk.AdvanceResult{}, err
			}
		}
	}
	if flowrule.Changes(a.Update) {
		flowrule.Update(f, a.Update)
		h.saveFlow(f)
	}
	for i, req := range reqs {
		if res.Tasks[i] == nil {
			res.Tasks[i], res.Created[i] = h.createTask(f, req), true
		}
	}
	if evs := h.outbox[flowID]; a.AckSeq != 0 && len(evs) > 0 && evs[0].Seq == a.AckSeq {
		h.outbox[flowID] = evs[1:]
	}
	return res, nil
}
