package runcenter_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// timelineBar is one bar of a flow page's timeline: kind, attempt,
// whether it still grows, and where it starts on the axis.
var timelineBar = regexp.MustCompile(`<rect class="tl-bar tl-[a-z_]+" data-attempt="(\d+)" data-kind="([a-z_]+)"( data-open)? x="([0-9.]+)" y="1" width="([0-9.]+)"`)

type bar struct {
	kind    string
	attempt int
	open    bool
	x, w    float64
}

// timelineOf reads the bars of task's strip on a flow page.
func timelineOf(t *testing.T, page, task string) []bar {
	t.Helper()
	_, row, ok := strings.Cut(page, `<li class="tl-row" data-task="`+task+`">`)
	require.True(t, ok, "the timeline has a strip for task %s", task)
	row, _, _ = strings.Cut(row, "</svg>")
	var bars []bar
	for _, m := range timelineBar.FindAllStringSubmatch(row, -1) {
		n, _ := strconv.Atoi(m[1])
		x, _ := strconv.ParseFloat(m[4], 64)
		w, _ := strconv.ParseFloat(m[5], 64)
		bars = append(bars, bar{kind: m[2], attempt: n, open: m[3] != "", x: x, w: w})
	}
	return bars
}

// A task retried twice shows each attempt as its own bar, in order, each
// after the wait that led to it, on an axis scaled to the flow; the
// hover says when, in UTC. The attempts are recorded through the engine
// calls the runner makes.
func TestTimelineDrawsEveryAttempt(t *testing.T) {
	t.Parallel()
	var task *stored.Task
	s := startSeeded(t, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "g", AllowUnknownController: true})
		require.NoError(t, err)
		task, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "flaky"})
		require.NoError(t, err)
		for n := 1; n <= 2; n++ {
			_, err = eng.StartTask(task.ID, engine.StartInput{})
			require.NoError(t, err)
			_, err = eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: n, Error: "exit 75", Class: sdk.FailureTransient})
			require.NoError(t, err)
		}
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		seventyFive := 75
		_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 3, ExitCode: &seventyFive, Error: "exit 75"})
		require.NoError(t, err)
		f, err = eng.GetFlow(f.ID)
		require.NoError(t, err)
		_, err = eng.Fail(f.ID, f.Revision, engine.EndInput{BlockedSummary: "flaky failed"})
		require.NoError(t, err)
	})

	page := s.get("/flows/"+task.FlowID, "")
	require.Contains(t, page, `<section id="timeline"><h2>Timeline</h2>`, "an ended flow's timeline is not live")
	bars := timelineOf(t, page, task.ID)
	var kinds []string
	for i, b := range bars {
		kinds = append(kinds, b.kind+" "+strconv.Itoa(b.attempt))
		require.False(t, b.open, "nothing grows once the flow ended")
		require.LessOrEqual(t, b.x+b.w, 1000.05, "bar %d stays on the axis", i)
		if i > 0 {
			require.GreaterOrEqual(t, b.x, bars[i-1].x, "bar %d starts after the one before", i)
		}
	}
	require.Equal(t, []string{"queued 1", "retried 1", "queued 2", "retried 2", "queued 3", "failed 3"}, kinds)
	require.Contains(t, page, "3 attempts</summary>")
	require.Regexp(t, `<title>attempt 3 ran, failed: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} → \d\d:\d\d:\d\d\.\d{3} UTC \([^)]+\)</title>`, page)
}

// A task that waits shows one open queued bar and no run; a running one
// a run that grows to now. The timeline alone, which the page's script
// fetches to grow it between redraws, is drawn the same way, and shows a
// label as text.
func TestTimelineOfWaitingAndRunningTasks(t *testing.T) {
	t.Parallel()
	var flowID, queued, running string
	s := startSeeded(t, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "g", AllowUnknownController: true})
		require.NoError(t, err)
		q, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: scriptGoal})
		require.NoError(t, err)
		r, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "runs"})
		require.NoError(t, err)
		_, err = eng.StartTask(r.ID, engine.StartInput{})
		require.NoError(t, err)
		flowID, queued, running = f.ID, q.ID, r.ID
	}, runcenter.Token{Name: "alice", Token: "alice-token"})

	page := s.get("/flows/"+flowID, "alice-token")
	require.Contains(t, page, `<section id="timeline" data-live>`)
	q := timelineOf(t, page, queued)
	require.Len(t, q, 1, "a queued task shows only its wait")
	require.Equal(t, bar{kind: "queued", attempt: 1, open: true, x: q[0].x, w: q[0].w}, q[0])
	r := timelineOf(t, page, running)
	require.Len(t, r, 2)
	require.Equal(t, "queued", r[0].kind)
	require.Equal(t, "running", r[1].kind)
	require.True(t, r[1].open, "a running attempt grows to now")
	require.InDelta(t, 1000, r[1].x+r[1].w, 0.2, "and reaches the axis's end")
	require.NotContains(t, page, scriptGoal)
	require.Contains(t, page, `>&lt;script&gt;alert(1)&lt;/script&gt;</a>`, "a label is text")

	part := s.get("/flows/"+flowID+"/timeline", "alice-token")
	require.True(t, strings.HasPrefix(part, `<section id="timeline" data-live>`), "the timeline alone: %.80s", part)
	require.NotContains(t, part, "<html")
	require.Len(t, timelineOf(t, part, queued), 1)
	resp, _ := s.do(http.MethodGet, "/flows/"+flowID+"/timeline", "", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the timeline needs a token like every page")
	resp, body := s.do(http.MethodGet, "/flows/nope/timeline", "alice-token", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, body, "nope")
}

// A mirrored flow run again with tasks flow retry has a strip for each
// of its tasks, the first run's first.
func TestTimelineOfARetriedMirroredFlow(t *testing.T) {
	t.Parallel()
	var flowID, first, second string
	s := startSeeded(t, func(eng *engine.Engine) {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "web", Label: "once more", Spec: sdk.TaskSpec{Argv: []string{"false"}}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		one := 1
		_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, ExitCode: &one})
		require.NoError(t, err)
		f, err := eng.GetFlow(task.FlowID)
		require.NoError(t, err)
		res, err := eng.RetryFlow(f.ID, f.Revision, "alice")
		require.NoError(t, err)
		flowID, first, second = f.ID, task.ID, res.Task.ID
	})
	page := s.get("/flows/"+flowID, "")
	require.Less(t, strings.Index(page, `<li class="tl-row" data-task="`+first+`"`), strings.Index(page, `<li class="tl-row" data-task="`+second+`"`))
	bars := timelineOf(t, page, first)
	require.Equal(t, "failed", bars[len(bars)-1].kind, "the first run's strip ends failed")
	require.NotEmpty(t, timelineOf(t, page, second), "the retry has its own strip")
}
