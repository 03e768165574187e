package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

// watchRecent is how many of the latest history entries a watch frame
// shows.
const watchRecent = 6

// watchPoll is how often a watch reads the flow again when no gateway
// serves the home (nothing can tell it of a write).
const watchPoll = 500 * time.Millisecond

// watchSettle is the least time between two reads woken by the history
// stream, so that a burst of entries (a task's progress) reads once.
const watchSettle = 100 * time.Millisecond

// watchBackstop is how often a watch that follows the gateway's history
// stream reads the flow again with no entry: the bound on how late it
// shows a write the gateway is not told of (another gateway's, on etcd).
const watchBackstop = 5 * time.Second

// clearScreen moves a terminal's cursor home and clears the screen.
const clearScreen = "\x1b[H\x1b[2J"

// flowWatch redraws one flow for `tasks flow show --watch`.
type flowWatch struct {
	e      *env
	id     string
	tty    bool
	after  int64 // the last history entry read
	recent []apitype.HistoryEntry
	last   []byte // the frame drawn last
	// poll and backstop pace the reads (watchPoll, watchBackstop).
	poll, backstop time.Duration
	// woke has a value once the history stream passed an entry; ended
	// is closed when that stream ends, and nil when none runs.
	woke  chan struct{}
	ended chan struct{}
}

// watchFlow draws flow token live until it ends or Ctrl-C: its tasks with
// their progress bars, a pipeline flow's stages as flow show lists them,
// its gate, and its latest history entries. On a
// terminal each frame replaces the last (a plain ANSI redraw); otherwise
// each changed frame is printed after a blank line, so a log keeps them
// all. Like history --follow it opens the gateway's socket, or the store
// for a moment, on every read, so it never locks writers out.
func (e *env) watchFlow(ctx context.Context, token string, asJSON bool) error {
	if asJSON {
		return usageError{fmt.Errorf("--watch draws the flow for people and takes no --json; for a machine-readable stream use flowgate tasks flow history %s --follow --json", token)}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	w := &flowWatch{e: e, tty: isTerminal(e.stdout), poll: watchPoll, backstop: watchBackstop}
	return w.run(ctx, token)
}

// run draws flow token until it ends or ctx ends: it reads the flow
// again at each entry of its history the gateway streams, else on a
// timer (see wait).
func (w *flowWatch) run(ctx context.Context, token string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		if w.ended != nil {
			<-w.ended
		}
	}()
	w.woke = make(chan struct{}, 1)
	for {
		readAt := time.Now()
		v, err := w.read(ctx, token)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		w.draw(v)
		if v.Status.Terminal() || !w.wait(ctx, readAt) {
			return nil
		}
	}
}

// wait returns when the flow, read at readAt, should be read again: at
// the next entry of its history on a gateway's stream (but not before
// readAt plus watchSettle), else after backstop; with no gateway, after
// poll. It reports false when ctx ended first.
func (w *flowWatch) wait(ctx context.Context, readAt time.Time) bool {
	every := w.poll
	if w.follow(ctx) {
		every = w.backstop
	}
	t := time.NewTimer(every)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-w.ended: // the gateway stopped, or the flow ended: read now
		return true
	case <-t.C:
		return true
	case <-w.woke:
	}
	t.Reset(time.Until(readAt.Add(watchSettle)))
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// follow makes sure the flow's history stream of the gateway that
// serves the home wakes the watch, and reports whether one does. A
// stream that ended is not opened again before the next wait, so a
// gateway that keeps ending it is read at the poll pace. A watch of a
// --store reads on its timer.
func (w *flowWatch) follow(ctx context.Context) bool {
	if w.ended != nil {
		select {
		case <-w.ended:
			w.ended = nil
			return false
		default:
			return true
		}
	}
	dir, err := w.e.home()
	if err != nil || w.e.store.URL != "" {
		return false
	}
	c, err := api.DialRemote(gateway.SocketPath(dir))
	if err != nil {
		return false
	}
	ended, woke, id, after := make(chan struct{}), w.woke, w.id, w.after
	w.ended = ended
	go func() {
		defer close(ended)
		defer c.Close()
		_ = c.FollowHistory(ctx, id, after, func(apitype.HistoryEntry) error {
			select {
			case woke <- struct{}{}:
			default: // a wake is already due
			}
			return nil
		})
	}()
	return true
}

// read reads the flow and the history entries recorded since the last
// read.
func (w *flowWatch) read(ctx context.Context, token string) (apitype.FlowView, error) {
	c, err := w.e.openReader()
	if err != nil {
		return apitype.FlowView{}, err
	}
	defer c.Close()
	if w.id == "" {
		if w.id, err = gateFlowID(ctx, c, token); err != nil {
			return apitype.FlowView{}, err
		}
	}
	v, err := c.ViewFlow(ctx, w.id)
	if err != nil {
		return v, err
	}
	w.id = v.ID
	for {
		page, err := c.History(ctx, w.id, w.after, 0)
		if err != nil {
			return v, err
		}
		w.recent = append(w.recent, page.Entries...)
		w.recent = w.recent[max(0, len(w.recent)-watchRecent):]
		w.after = page.Next
		if len(page.Entries) < api.MaxHistoryPage {
			return v, nil
		}
	}
}

// draw writes the frame of v when it differs from the last one.
func (w *flowWatch) draw(v apitype.FlowView) {
	var b bytes.Buffer
	writeFlow(&b, v)
	writeStages(&b, pipelineStages(v))
	writeGate(&b, v.Flow)
	if len(w.recent) > 0 {
		fmt.Fprintln(&b, "Recent history:")
		for _, en := range w.recent {
			printEntry(&b, en, false)
		}
	}
	if bytes.Equal(b.Bytes(), w.last) {
		return
	}
	switch {
	case w.tty:
		io.WriteString(w.e.stdout, clearScreen)
	case w.last != nil:
		fmt.Fprintln(w.e.stdout)
	}
	w.last = b.Bytes()
	w.e.stdout.Write(w.last)
}

// writeGate says what gate f waits at and how to answer it, if any.
func writeGate(w io.Writer, f *sdk.Flow) {
	g, ok := sdk.ParseGate(f.Wait)
	if f.Status != sdk.FlowWaiting || !ok {
		return
	}
	fmt.Fprintf(w, "Gate: %s at step %s: %s\n", g.Kind, clean(g.Step), clip(g.Prompt, 80))
	if g.Kind == sdk.GateApproval {
		fmt.Fprintf(w, "  answer with: flowgate tasks flow approve|deny %s\n", f.ID)
	} else {
		fmt.Fprintf(w, "  answer with: flowgate tasks flow input %s --response-json J\n", f.ID)
	}
}
