package engine

import "time"

// PruneFlowStep is one step of a prune in steps (pruneFlowTasks), for
// tests that stop a prune between steps as a crash would.
func (e *Engine) PruneFlowStep(id string, cutoff time.Time, n int) ([]string, error) {
	return e.pruneFlowTasks(id, cutoff, n)
}
