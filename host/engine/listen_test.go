package engine_test

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
)

// heard is what listeners were told, in order, as "name kind".
type heard struct {
	mu  sync.Mutex
	log []string
}

func (h *heard) listener(name string) engine.Listener {
	return engine.ListenerFunc(func(c engine.Change) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.log = append(h.log, name+" "+c.Kind.String())
	})
}

func (h *heard) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

// panics counts the listeners that panicked (engine.ListenerObserver).
type panics struct {
	mu  sync.Mutex
	got map[string]int
}

func (p *panics) ListenerPanicked(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got[name]++
}

// safeBuffer is a log sink read while the engine may write to it.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Each committed change goes to every listener in the order they were
// registered, one change after the other.
func TestListenersHearChangesInTheOrderRegistered(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	var h heard
	eng.Listen("runner", h.listener("runner"))
	eng.Listen("event delivery", h.listener("event delivery"))
	eng.Listen("metrics", h.listener("metrics"))

	createFlow(t, eng) // queues flow.started
	require.Equal(t, []string{"runner event_queued", "event delivery event_queued", "metrics event_queued"}, h.all())

	eng.Listen("late", h.listener("late"))
	createFlow(t, eng)
	require.Equal(t, []string{"runner event_queued", "event delivery event_queued", "metrics event_queued",
		"runner event_queued", "event delivery event_queued", "metrics event_queued", "late event_queued"}, h.all(),
		"a listener registered later hears the next change, after the others")
}

// A listener that panics does not take the writer down: the write
// stands, the panic is logged with the listener's name and counted, and
// the listeners after it are still told.
func TestAPanickingListenerIsRecoveredAndNamed(t *testing.T) {
	t.Parallel()
	var out safeBuffer
	obs := &panics{got: map[string]int{}}
	eng, err := engine.New(openStore(t), engine.Config{Observer: obs,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Info})})
	require.NoError(t, err)
	var h heard
	eng.Listen("runner", h.listener("runner"))
	eng.Listen("event delivery", engine.ListenerFunc(func(engine.Change) { panic("nil map in delivery") }))
	eng.Listen("metrics", h.listener("metrics"))

	f := createFlow(t, eng)
	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err, "the write stands")
	require.Equal(t, f.Revision, got.Revision)
	require.Equal(t, []string{"runner event_queued", "metrics event_queued"}, h.all(), "the listener after the panicking one is told")
	require.Equal(t, map[string]int{"event delivery": 1}, obs.got)
	logged := out.String()
	require.Contains(t, logged, "a change listener panicked")
	require.Contains(t, logged, `listener="event delivery"`)
	require.Contains(t, logged, "change=event_queued")
	require.Contains(t, logged, "nil map in delivery")
	require.Contains(t, logged, "listen_test.go", "the stack names where the listener panicked")

	createFlow(t, eng)
	require.Equal(t, map[string]int{"event delivery": 2}, obs.got, "it is told of the next change again")
}

// A listener slower than SlowListener is logged by name: the writer
// waited for it.
func TestASlowListenerIsNamed(t *testing.T) {
	t.Parallel()
	var out safeBuffer
	eng, err := engine.New(openStore(t), engine.Config{SlowListener: time.Nanosecond,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Info})})
	require.NoError(t, err)
	eng.Listen("finish notices", engine.ListenerFunc(func(engine.Change) { time.Sleep(time.Millisecond) }))
	createFlow(t, eng)
	require.Contains(t, out.String(), "a change listener was slow")
	require.Contains(t, out.String(), `listener="finish notices"`)
}
