package engine

import (
	"cmp"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// flowHead is the part of a flow's record that a task's start asks of
// its flow: whether it is managed or mirrored, and its chain. A managed
// flow's record holds its controller's state, which grows with every
// step, so the hot paths that need only these (FlowHalted before each
// launch, a task's write that its managed flow is not told of) decode
// them alone instead of the whole record.
type flowHead struct {
	ID           string         `json:"id"`
	SyncMode     sdk.SyncMode   `json:"sync_mode"`
	ControllerID string         `json:"controller_id"`
	Status       sdk.FlowStatus `json:"status"`
	ChainID      string         `json:"chain_id"`
}

// chain is the flow's chain, as sdk.Flow.Chain says.
func (h flowHead) chain() string { return cmp.Or(h.ChainID, h.ID) }

// loadFlowHead reads the head of flow id, or returns loadFlow's errors:
// ErrNotFound, or a *DamagedRecord when the record does not decode or
// its head is one the engine could not have written.
func loadFlowHead(tx store.ReadTx, id string) (flowHead, error) {
	it, err := flowItem(tx, id)
	if err != nil {
		return flowHead{}, err
	}
	return decodeFlowHead(it)
}

// decodeFlowHead decodes the head of the flow record in it, failing as
// loadFlowHead does.
func decodeFlowHead(it store.Item) (flowHead, error) {
	var h flowHead
	if err := unmarshalFlow(it.Value, &h); err != nil {
		return h, &DamagedRecord{Key: it.Key, Reason: "it does not decode: " + err.Error()}
	}
	if err := validate(it.Key, &sdk.Flow{ID: h.ID, SyncMode: h.SyncMode, ControllerID: h.ControllerID, Status: h.Status}); err != nil {
		return h, &DamagedRecord{Key: it.Key, Reason: err.Error()}
	}
	return h, nil
}
