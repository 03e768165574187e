package runcenter

import (
	"net/http"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The timeline draws a flow's tasks on one time axis, Gantt-like: for
// each attempt of each task the wait before it (queued) and its run,
// coloured by how it ended. It is SVG drawn by the server, one strip a
// task, with the axis in the SVG's own units (timelineWidth) stretched
// to the page, so the page's style policy, which allows no inline
// style, needs no exception, and the page reads with JavaScript off.

// timelineWidth is the axis's width in the SVG's units.
const timelineWidth = 1000

// minBarWidth keeps a bar of a few milliseconds visible on a long axis.
const minBarWidth = 3

// timeline is a flow's tasks on the axis From to To.
type timeline struct {
	From, To time.Time
	// Live says the axis ends now: the flow has not ended, and the bars
	// of what still waits or runs end where the page was drawn.
	Live bool
	Rows []timelineRow
}

// timelineRow is one task's strip.
type timelineRow struct {
	*stored.Task
	Attempts []attemptSpan
	Bars     []timelineBar
}

// attemptSpan is one attempt of a task: the wait before it, its run and
// how it ended.
type attemptSpan struct {
	N int
	// Queued is when the wait began: the task's creation for the first
	// attempt, the previous attempt's end for a retry; zero when not
	// kept. Started is zero for an attempt that never started, Ended
	// while it waits or runs.
	Queued, Started, Ended time.Time
	// Outcome is "queued" for an attempt still waiting, "running",
	// "retried" for a failed attempt that was queued again, or the
	// task's end status for its last attempt.
	Outcome string
}

// timelineBar is one bar: a wait (Kind "queued") or a run (Kind the
// attempt's Outcome). X and W place it on the axis.
type timelineBar struct {
	Attempt  int
	Kind     string
	From, To time.Time
	// Open says the bar ends now: it still grows.
	Open bool
	X, W string
}

// Title is what the bar says on hover, in UTC.
func (b timelineBar) Title() string {
	what := "queued"
	if b.Kind != "queued" {
		what = "ran, " + b.Kind
	}
	s := "attempt " + strconv.Itoa(b.Attempt) + " " + what + ": " + b.From.UTC().Format("2006-01-02 15:04:05.000") + " → "
	if b.Open {
		return s + "now UTC (" + roundSpan(b.To.Sub(b.From)) + " so far)"
	}
	return s + b.To.UTC().Format("15:04:05.000") + " UTC (" + roundSpan(b.To.Sub(b.From)) + ")"
}

// roundSpan writes d to a precision that suits its size.
func roundSpan(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return shortDuration(d.Round(time.Second))
}

// newTimeline lays out v's tasks, in the order the flow has them, on an
// axis from the flow's creation to its end, or to now while it has not
// ended.
func newTimeline(v apitype.FlowView, now time.Time) timeline {
	tl := timeline{From: v.CreatedAt, To: v.EndedAt, Live: !v.Status.Terminal() || v.EndedAt.IsZero()}
	if tl.Live {
		tl.To = now
	}
	for _, t := range v.Tasks {
		row := timelineRow{Task: t, Attempts: attemptsOf(t)}
		row.Bars = barsOf(row.Attempts, now)
		for _, b := range row.Bars {
			if b.From.Before(tl.From) {
				tl.From = b.From
			}
			if b.To.After(tl.To) {
				tl.To = b.To
			}
		}
		tl.Rows = append(tl.Rows, row)
	}
	span := tl.To.Sub(tl.From)
	if span <= 0 {
		span = time.Second
	}
	at := func(t time.Time) float64 { return float64(t.Sub(tl.From)) / float64(span) * timelineWidth }
	for _, row := range tl.Rows {
		for i := range row.Bars {
			b := &row.Bars[i]
			x, w := at(b.From), max(at(b.To)-at(b.From), minBarWidth)
			x = min(x, timelineWidth-w)
			b.X, b.W = strconv.FormatFloat(x, 'f', 1, 64), strconv.FormatFloat(w, 'f', 1, 64)
		}
	}
	return tl
}

// attemptsOf lists t's attempts from the times it kept of each
// (sdk.Task.AttemptTimes). A task never started, or recorded before
// those times were kept, has one span from what the record says: its
// creation, its first start and its end.
func attemptsOf(t *stored.Task) []attemptSpan {
	if len(t.AttemptTimes) == 0 {
		a := attemptSpan{N: max(t.Attempts, 1), Queued: t.CreatedAt, Started: t.StartedAt, Ended: t.EndedAt, Outcome: string(t.Status)}
		if t.Status.Active() {
			a.Ended = time.Time{}
		}
		if t.Status == sdk.TaskQueued {
			a.Started = time.Time{} // an older retry's wait: its first start is long past
		}
		return []attemptSpan{a}
	}
	var out []attemptSpan
	var prevEnd time.Time
	if t.AttemptTimes[0].Attempt == 1 {
		prevEnd = t.CreatedAt
	}
	for i, at := range t.AttemptTimes {
		a := attemptSpan{N: at.Attempt, Queued: prevEnd, Started: at.StartedAt, Ended: at.EndedAt}
		switch {
		case at.EndedAt.IsZero():
			a.Outcome = string(sdk.TaskRunning)
		case i < len(t.AttemptTimes)-1 || t.Status == sdk.TaskQueued || t.EndedAt.After(at.EndedAt):
			a.Outcome = "retried"
		default:
			a.Outcome = string(t.Status)
		}
		out = append(out, a)
		prevEnd = at.EndedAt
	}
	// After a failed attempt the task waits for its retry, or ended in
	// that wait (cancelled): that is the next attempt's wait.
	if last := out[len(out)-1]; last.Outcome == "retried" {
		next := attemptSpan{N: last.N + 1, Queued: last.Ended, Outcome: string(t.Status)}
		if t.Status.Terminal() {
			next.Ended = t.EndedAt
		}
		out = append(out, next)
	}
	return out
}

// barsOf draws attempts: each one's wait, then its run. What still
// waits or runs ends at now.
func barsOf(attempts []attemptSpan, now time.Time) []timelineBar {
	var bars []timelineBar
	upTo := func(t time.Time) (time.Time, bool) {
		if t.IsZero() {
			return now, true
		}
		return t, false
	}
	for _, a := range attempts {
		if !a.Queued.IsZero() {
			end := a.Started
			if end.IsZero() {
				end = a.Ended
			}
			to, open := upTo(end)
			bars = append(bars, timelineBar{Attempt: a.N, Kind: "queued", From: a.Queued, To: to, Open: open})
		}
		if !a.Started.IsZero() {
			to, open := upTo(a.Ended)
			bars = append(bars, timelineBar{Attempt: a.N, Kind: a.Outcome, From: a.Started, To: to, Open: open})
		}
	}
	return bars
}

// Timeline is the flow's timeline as the page is drawn.
func (p flowPage) Timeline() timeline { return newTimeline(p.View, time.Now()) }

// timelinePart answers a flow's timeline alone, drawn as on its page:
// what the page's script fetches when a progress entry moved a task's
// bar without a redraw, so that a running attempt's bar keeps growing.
func (s *Server) timelinePart(w http.ResponseWriter, r *http.Request) {
	v, err := s.cfg.Client.ViewFlow(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, "flow", "timeline-part", http.StatusOK, view{Data: newTimeline(v, time.Now())})
}
