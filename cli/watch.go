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

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// watchRecent is how many of the latest history entries a watch frame
// shows.
const watchRecent = 6

// watchPoll is how often a watch reads the flow again.
const watchPoll = 500 * time.Millisecond

// clearScreen moves a terminal's cursor home and clears the screen.
const clearScreen = "\x1b[H\x1b[2J"

// flowWatch redraws one flow for `tasks flow show --watch`.
type flowWatch struct {
	e      *env
	id     string
	tty    bool
	after  int64 // the last history entry read
	recent []engine.HistoryEntry
	last   []byte // the frame drawn last
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
	w := &flowWatch{e: e, tty: isTerminal(e.stdout)}
	for {
		v, err := w.read(ctx, token)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		w.draw(v)
		if v.Status.Terminal() {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchPoll):
		}
	}
}

// read reads the flow and the history entries recorded since the last
// read.
func (w *flowWatch) read(ctx context.Context, token string) (engine.FlowView, error) {
	c, err := w.e.openReader()
	if err != nil {
		return engine.FlowView{}, err
	}
	defer c.Close()
	if w.id == "" {
		if w.id, err = gateFlowID(ctx, c, token); err != nil {
			return engine.FlowView{}, err
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
		if len(page.Entries) < engine.MaxHistoryPage {
			return v, nil
		}
	}
}

// draw writes the frame of v when it differs from the last one.
func (w *flowWatch) draw(v engine.FlowView) {
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
