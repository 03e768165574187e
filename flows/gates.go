package flows

// Gates returns the ids of the workflow's steps that stop a run until
// someone answers: approval and input steps, in order. Only top-level
// steps can be gates (a gate in a sub-workflow fails the run); none is an
// empty slice.
func (w *Workflow) Gates() []string {
	out := []string{}
	for _, s := range w.Steps {
		if s.Approval != nil || s.Input != nil {
			out = append(out, s.ID)
		}
	}
	return out
}
