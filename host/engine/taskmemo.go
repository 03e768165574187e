package engine

import (
	"bytes"
	"sync"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
)

// memoTasks is how many decoded task records a taskMemo keeps, and
// memoBytes how many stored bytes they may come from in all: a task's
// record holds up to 256 KiB of output inline, so a count alone would let
// the memo grow to hundreds of MiB. A record over memoRecordBytes is
// decoded at each read, as before the memo.
const (
	memoTasks       = 1024
	memoBytes       = 8 << 20
	memoRecordBytes = 64 << 10
)

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
	// bytes is the size of the stored records m's tasks came from.
	bytes int
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
		return scanRecord[stored.Task](it)
	}
	m.mu.Lock()
	kept, ok := m.m[key]
	m.mu.Unlock()
	if ok && bytes.Equal(kept.raw, it.Value) {
		t := *kept.task
		return &t, nil
	}
	task, err := scanRecord[stored.Task](it)
	if err != nil {
		return nil, err
	}
	t := *task
	if len(it.Value) > memoRecordBytes {
		return &t, nil
	}
	m.mu.Lock()
	if m.m == nil || len(m.m) >= memoTasks || m.bytes+len(it.Value) > memoBytes {
		m.m, m.bytes = make(map[string]memoTask, memoTasks), 0
	}
	if old, ok := m.m[key]; ok {
		m.bytes -= len(old.raw)
	}
	m.m[key] = memoTask{raw: it.Value, task: task}
	m.bytes += len(it.Value)
	m.mu.Unlock()
	return &t, nil
}
