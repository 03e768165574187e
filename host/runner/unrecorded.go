package runner

import (
	"errors"
	"maps"

	"github.com/flowgate/flowgate/host/store"
)

// While the store cannot write (a full disk), the runner holds back (see
// Runner.hold) and keeps what it could not record, so that no task stays
// running with nothing to follow it.

// FilesHealth says whether the runner could write the files of the last
// attempt it started (its log directory, spec and input): false while
// their disk is full, until an attempt's files are written again.
func (r *Runner) FilesHealth() store.WriteHealth { return r.files.Get() }

// record runs write, which records how a launch of task id that did not
// happen ended; when the store fails to write it, write is kept for
// recordLaunches, so the task does not stay running with nothing to
// follow it.
func (r *Runner) record(id string, write func() error) {
	if errors.Is(write(), store.ErrWriteFailed) {
		r.mu.Lock()
		r.unrecorded[id] = write
		r.mu.Unlock()
	}
}

// recordLaunches writes the records record kept, unless the store is
// held back; those the store fails again stay for the next time.
func (r *Runner) recordLaunches() {
	r.mu.Lock()
	todo := maps.Clone(r.unrecorded)
	r.mu.Unlock()
	for id, write := range todo {
		if r.hold.Wait() > 0 {
			return
		}
		if !errors.Is(write(), store.ErrWriteFailed) {
			r.mu.Lock()
			delete(r.unrecorded, id)
			r.mu.Unlock()
		}
	}
}
