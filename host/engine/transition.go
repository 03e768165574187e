package engine

import (
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The state machines live in package sdk (sdk/transition.go), where
// sdktest's Host applies them too: the engine and a controller's tests
// cannot disagree on which move is allowed. These are the engine's names
// for the two checks every status move goes through.

// checkFlowMove refuses a move sdk.CheckFlowMove refuses: leaving a
// terminal status (ErrTerminal), a move not in the table
// (ErrIllegalTransition), and under a cancel request any move but toward
// cancelled, failed or lost (ErrCancelRequested).
func checkFlowMove(f *sdk.Flow, to sdk.FlowStatus) error { return sdk.CheckFlowMove(f, to) }

// checkTaskMove refuses a move sdk.CheckTaskMove refuses.
func checkTaskMove(t *stored.Task, to sdk.TaskStatus) error { return sdk.CheckTaskMove(&t.Task, to) }
