package sdk

// AdvanceRequest is what Host.Advance records in one transaction: Update,
// applied to the flow as UpdateFlow applies it, then Tasks, created in
// order as CreateTask creates them. An Update with no field set leaves the
// flow unwritten (its revision unchanged) but is still guarded: the
// revision must be the expected one.
//
// A controller moving a flow to its next step sends the step's state and
// its task in one Advance instead of an UpdateFlow and a CreateTask; a
// fan-out (parallel branches) sends all of its tasks in one. Tasks keep
// their idempotency keys: when an event is delivered again, the same
// Advance returns the tasks the first one created (Created false).
type AdvanceRequest struct {
	Update FlowUpdate `json:"update"`
	// Tasks are the tasks to create in the flow; at least one. Each
	// TaskRequest.FlowID is the flow's id or empty (the host fills it in).
	Tasks []TaskRequest `json:"tasks"`
	// AckSeq, when not 0, is the Seq of the event the controller is
	// handling for this flow, and says this Advance is the last write it
	// makes for that event: the gateway removes the event from the
	// outbox in the same transaction, so the event costs no commit of its
	// own, and it is gone only together with what the controller did for
	// it. Set it only on the last write: an event acknowledged early is
	// not delivered again when the controller stops before its later
	// writes. It is ignored when the event is no longer the one in
	// delivery (it was acknowledged already, or parked); what
	// HandleEvent returns afterwards is then moot for that event.
	AckSeq int64 `json:"ack_seq,omitempty"`
}

// AdvanceResult is what Host.Advance did: the flow as it now is, and the
// tasks in the order they were asked for.
type AdvanceResult struct {
	Flow  *Flow   `json:"flow"`
	Tasks []*Task `json:"tasks"`
	// Created says, for each of Tasks, whether this call created it;
	// false means its idempotency key named a task that already existed,
	// which is returned as it is.
	Created []bool `json:"created"`
}
