package engine

import (
	"bytes"
	"sync"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
)

// memoTasks is how many decoded task records a taskMemo keeps.
const memoTasks = 1024

// taskMemo keeps task records the engine's read-only listings decoded,
// each with the bytes it was decoded from. A flow's tasks are listed at
// every event of its pipeline (the controller's pass) and at every change
// a waiting client sees (the flow's view), and all but the newest are
// finished and unchanged: decoding each again was a cost that grew with
// the flow's steps. A record is reused only when its stored bytes are the
// same, so a task that changed, or a key deleted and written again, is
// decoded anew. The writes' own reads never use it: a write's caller may
// change what it read.
type taskMemo struct {
	mu sync.Mutex
	m  map[string]memoTask
}

type memoTask struct {
	raw  []byte
	task *stored.Task
}

// get reads the task record at key as getRecord does. A task it gives is
// a copy of the kept one that shares its slices, maps and pointers: its
// fields may be set, but what they point to must not be changed.
func (m *taskMemo) get(tx store.ReadTx, key string) (*stored.Task, error) {
	it, err := tx.Get(key)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return decodeRecord[stored.Task](it)
	}
	m.mu.Lock()
	kept, ok := m.m[key]
	m.mu.Unlock()
	if ok && bytes.Equal(kept.raw, it.Value) {
		t := *kept.task
		return &t, nil
	}
	task, err := decodeRecord[stored.Task](it)
	if err != nil {
		return nil, err
	}
	t := *task
	m.mu.Lock()
	if m.m == nil || len(m.m) >= memoTasks {
		m.m = make(map[string]memoTask, memoTasks)
	}
	m.m[key] = memoTask{raw: it.Value, task: task}
	m.mu.Unlock()
	return &t, nil
}
