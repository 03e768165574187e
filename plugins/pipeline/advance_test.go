package pipeline_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// counting is the pipeline controller with the writes it makes through
// its host recorded, one list per event it handles.
type counting struct {
	sdk.Controller
	mu     sync.Mutex
	events [][]string
}

func (c *counting) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	w := &writes{Host: h}
	err := c.Controller.HandleEvent(ctx, w, ev)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, w.calls)
	return err
}

func (c *counting) recorded() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]string(nil), c.events...)
}

// writes is a host that notes each write a controller makes.
type writes struct {
	sdk.Host
	calls []string
}

func (w *writes) note(call string) { w.calls = append(w.calls, call) }

func (w *writes) CreateTask(ctx context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	w.note("CreateTask")
	return w.Host.CreateTask(ctx, req)
}

func (w *writes) UpdateFlow(ctx context.Context, id string, expected int64, u sdk.FlowUpdate) (*sdk.Flow, error) {
	w.note("UpdateFlow")
	return w.Host.UpdateFlow(ctx, id, expected, u)
}

func (w *writes) Advance(ctx context.Context, id string, expected int64, a sdk.AdvanceRequest) (sdk.AdvanceResult, error) {
	w.note(fmt.Sprintf("Advance(%d)", len(a.Tasks)))
	return w.Host.Advance(ctx, id, expected, a)
}

func (w *writes) Resume(ctx context.Context, id string, expected int64, r sdk.ResumeRequest) (*sdk.Flow, error) {
	w.note("Resume")
	return w.Host.Resume(ctx, id, expected, r)
}

func (w *writes) Finish(ctx context.Context, id string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	w.note("Finish")
	return w.Host.Finish(ctx, id, expected, e)
}

// Each step that starts a task is one write of the flow and its task
// (Host.Advance), where it was an UpdateFlow and a CreateTask; parallel
// branches start in one Advance, and so do the items of a for_each batch.
func TestAStepIsOneWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file string
		want [][]string
	}{
		{"shell.lobster", [][]string{{"Resume", "Advance(1)"}, {"Advance(1)"}, {"Finish"}}},
		{"parallel.lobster", [][]string{{"Resume", "Advance(2)"}, nil, {"Advance(1)"}, {"Finish"}}},
		{"foreach-fan.lobster", [][]string{{"Resume", "Advance(4)"}, {"Advance(1)"}, {"Advance(1)"}, {"Advance(1)"}, {"Advance(1)"}, nil, nil, nil, {"Finish"}}},
		{"foreach.lobster", [][]string{{"Resume", "Advance(1)"}, {"Advance(1)"}, {"Advance(1)"}, {"Advance(1)"}, {"Advance(1)"}, {"Advance(1)"}, {"Finish"}}},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			ctl := &counting{Controller: pipeline.New()}
			r := &runner{}
			h := sdktest.New(t, ctl)
			f, _ := start(t, h, c.file, nil)
			for range 10 {
				tasks := activeTasks(h, f.ID)
				if len(tasks) == 0 {
					break
				}
				r.run(t, h, tasks[0])
			}
			require.Equal(t, sdk.FlowSucceeded, h.Flow(f.ID).Status, h.Flow(f.ID).BlockedSummary)
			require.Equal(t, c.want, ctl.recorded(), "the writes of each event")
		})
	}
}

// activeTasks returns the active tasks of flow flowID, oldest first.
func activeTasks(h *sdktest.Harness, flowID string) []*sdk.Task {
	var out []*sdk.Task
	for _, t := range h.Tasks(flowID) {
		if t.Status.Active() {
			out = append(out, t)
		}
	}
	return out
}

// acking is the pipeline controller with, for each event it handles, the
// event's Seq and the AckSeq of each Advance it made.
type acking struct {
	sdk.Controller
	mu    sync.Mutex
	pairs [][2]int64
}

func (c *acking) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	return c.Controller.HandleEvent(ctx, &ackNoter{Host: h, ev: ev.Seq, c: c}, ev)
}

// ackNoter notes the AckSeq of each Advance against the event in hand.
type ackNoter struct {
	sdk.Host
	ev int64
	c  *acking
}

func (n *ackNoter) Advance(ctx context.Context, id string, expected int64, a sdk.AdvanceRequest) (sdk.AdvanceResult, error) {
	n.c.mu.Lock()
	n.c.pairs = append(n.c.pairs, [2]int64{n.ev, a.AckSeq})
	n.c.mu.Unlock()
	return n.Host.Advance(ctx, id, expected, a)
}

// The Advance that starts a step's task acknowledges the event its pass
// handles, so a step's event costs no commit of its own (the Advance ends
// the pass: nothing is written for that event after it).
func TestAStepsAdvanceAcknowledgesItsEvent(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"shell.lobster", "parallel.lobster", "foreach.lobster"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			ctl := &acking{Controller: pipeline.New()}
			r := &runner{}
			h := sdktest.New(t, ctl)
			f, _ := start(t, h, file, nil)
			for range 10 {
				tasks := activeTasks(h, f.ID)
				if len(tasks) == 0 {
					break
				}
				r.run(t, h, tasks[0])
			}
			require.Equal(t, sdk.FlowSucceeded, h.Flow(f.ID).Status, h.Flow(f.ID).BlockedSummary)
			ctl.mu.Lock()
			defer ctl.mu.Unlock()
			require.GreaterOrEqual(t, len(ctl.pairs), 2)
			for _, p := range ctl.pairs {
				require.NotZero(t, p[1], "an Advance acknowledges its event")
				require.Equal(t, p[0], p[1], "the Advance acknowledges the event in hand")
			}
		})
	}
}
