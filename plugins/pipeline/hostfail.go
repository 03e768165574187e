package pipeline

import "fmt"

// hostFailed is the error of the Host when the pass could not read back
// a kept value or list a flow's tasks because the Host failed (a store
// that did not answer, a gateway shutting down): the flow does not fail
// on what may read well next time; the pass ends on the error, and its
// event comes again.
func (r *run) hostFailed() error {
	var err error
	if r.files.store != nil {
		err = r.files.store.failed
	}
	if err == nil && r.st != nil && r.st.outputs != nil {
		err = r.st.outputs.failed
	}
	if err != nil {
		return fmt.Errorf("the pass of flow %s ends without failing it, as the gateway failed to read what its state names (it runs again with the event): %w", r.flow.ID, err)
	}
	return nil
}
