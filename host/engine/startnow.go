package engine

import (
	"sync/atomic"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Starter is a runner that takes tasks at their creation. A task created
// runnable, while no other task waits and the runner has a free slot,
// is recorded running by the write that creates it, and handed to the
// runner when that write commits: its start costs no commit of its own,
// and no wait for the runner to find it in the queue. It is the same
// claim as StartTask's, made one commit earlier, so a crash before the
// launch leaves what a crash between StartTask and the launch leaves:
// a running attempt no shim claimed, which the next start takes back.
type Starter interface {
	// Reserve takes a free slot for a task that runs on label on
	// (TaskSpec.On, empty for any gateway) and returns the start to
	// record; false when no slot is free or the runner starts nothing
	// now (it does not dispatch yet, drains, or the store failed).
	Reserve(on string) (StartInput, bool)
	// Release gives back a slot that Reserve took for a task that no
	// committed write started.
	Release()
	// Launch launches started, created running in a slot that Reserve
	// took, once its write committed; queued is the task as it would
	// have waited in the queue.
	Launch(queued, started *stored.Task)
}

// StartAtCreation makes s take the tasks it has room for at their
// creation (see Starter), for this engine and every copy of it
// (WithContext). A nil s stops it.
func (e *Engine) StartAtCreation(s Starter) {
	if s == nil {
		e.starter.Store(nil)
		return
	}
	e.starter.Store(&s)
}

// starterSlot holds the engine's Starter, shared by its copies.
type starterSlot struct{ atomic.Pointer[Starter] }

// get returns the Starter, or nil.
func (s *starterSlot) get() Starter {
	if p := s.Load(); p != nil {
		return *p
	}
	return nil
}

// creationStarts is what one write started at creation: the slots it
// reserved and the tasks it started in them. A store may run a write's
// function again (a group commit whose batch failed starts over), so it
// lives beside the write, not in one run of its transaction.
type creationStarts struct {
	starter  Starter
	reserved int
	tasks    []handedTask
}

// handedTask is a task started at its creation: as it would have
// waited, and as it was recorded.
type handedTask struct{ queued, started *stored.Task }

// undo gives back every slot reserved so far: the write ran again, was
// refused, or failed.
func (c *creationStarts) undo() {
	for ; c.reserved > 0; c.reserved-- {
		c.starter.Release()
	}
	c.tasks = nil
}

// hand gives the runner the tasks the committed write started.
func (c *creationStarts) hand() {
	for _, h := range c.tasks {
		c.reserved--
		c.starter.Launch(h.queued, h.started)
	}
	c.undo() // slots reserved for tasks that were not started after all
}

// startAtCreation records nt, a task being created queued, as started
// when the engine's Starter has a slot for it and no other task waits,
// so that tasks still start in the order they were queued. It returns
// whether it did.
func (t *txn) startAtCreation(nt *stored.Task) (bool, error) {
	c := t.starts
	if c == nil || c.starter == nil || t.queuedNew || nt.Status != sdk.TaskQueued || !Runnable(nt) {
		return false, nil
	}
	waiting := false
	err := t.tx.Scan(idxTaskStatus+string(sdk.TaskQueued)+"/", store.ScanOptions{Limit: 1}, func(store.Item) bool {
		waiting = true
		return false
	})
	if err != nil || waiting {
		return false, err
	}
	start, ok := c.starter.Reserve(nt.Spec.On)
	if !ok {
		return false, nil
	}
	c.reserved++
	queued := *nt
	if err := startTask(start)(t, nt); err != nil {
		return false, err
	}
	if t.createdQueued == nil {
		t.createdQueued = map[string]*stored.Task{}
	}
	t.createdQueued[nt.ID] = &queued
	return true, nil
}

// handAtCommit keeps the task started at its creation for the runner,
// once its record (and its flow, for a detached task) is written.
func (t *txn) handAtCommit(nt *stored.Task) {
	queued, started := t.createdQueued[nt.ID], *nt
	queued.FlowID = nt.FlowID
	t.starts.tasks = append(t.starts.tasks, handedTask{queued: queued, started: &started})
}
