package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
)

// link is a command's hold on the home's records that outlives a gateway:
// the client workClient returns and, when the gateway behind it stops, the
// next one (a gateway that starts meanwhile, or one hosted in this
// process). tasks run submits and follows its task through it, so a
// gateway killed under it costs a reconnect, not a wrong answer.
type link struct {
	e    *env
	cmd  *cobra.Command
	dir  string
	c    api.Client
	stop func()
	// noWait is set once the gateway refused to wait for a flow to change
	// (see nextView).
	noWait bool
}

// linkTries bounds how many gateways in a row one call tries before it
// gives up: each may stop before it answers.
const linkTries = 5

// openLink connects to the gateway of home dir, or hosts one, as
// workClient does.
func (e *env) openLink(ctx context.Context, cmd *cobra.Command, dir string) (*link, error) {
	c, stop, err := e.workClient(ctx, cmd, dir)
	if err != nil {
		return nil, err
	}
	return &link{e: e, cmd: cmd, dir: dir, c: c, stop: stop}, nil
}

// withLink runs fn with a link to the gateway of the home (or one hosted
// in this process, as withWorkClient does), and closes it after. A command
// that follows work goes through l so that it follows on through the next
// gateway when this one stops; l.c is the first gateway's client.
func (e *env) withLink(cmd *cobra.Command, fn func(ctx context.Context, l *link) error) error {
	dir, err := e.home()
	if err != nil {
		return err
	}
	l, err := e.openLink(cmd.Context(), cmd, dir)
	if err != nil {
		return err
	}
	defer l.close()
	return fn(cmd.Context(), l)
}

// close releases the client (stopping a gateway hosted in this process).
func (l *link) close() {
	if l.stop != nil {
		l.stop()
	}
	l.c, l.stop = nil, nil
}

// gone reports whether err means the gateway behind a client stopped.
func gone(err error) bool {
	return errors.Is(err, api.ErrNoGateway) || errors.Is(err, api.ErrNoAnswer)
}

// passing reports whether err, from reaching the next gateway, may pass:
// the gateways are changing hands (one stopped, one starts and holds the
// store), so another try may find one (workClient tries again).
func passing(err error) bool {
	return gone(err) || errors.Is(err, api.ErrStoreLocked) || errors.Is(err, gateway.ErrAlreadyRunning)
}

// retry runs call, and again through the next gateway while the gateway
// behind the client stops (call reports it with an error gone accepts),
// up to linkTries gateways. again says whether a call whose gateway
// stopped after it was sent (ErrNoAnswer) may be sent again; when it may
// not, that error is returned.
func (l *link) retry(ctx context.Context, again bool, call func(c api.Client) error) error {
	var err, lost error // the last error, and the call's that lost the gateway
	for range linkTries {
		if l.c == nil {
			c, stop, cerr := l.e.workClient(ctx, l.cmd, l.dir)
			if cerr != nil {
				err = cerr
				if lost != nil {
					err = fmt.Errorf("%w; then: %w", lost, cerr)
				}
				return err // workClient waited for the next gateway already
			}
			l.c, l.stop = c, stop
		}
		err = call(l.c)
		lost = err
		switch {
		case err == nil || !gone(err) || ctx.Err() != nil:
			return err
		case errors.Is(err, api.ErrNoAnswer) && !again:
			return err
		}
		l.close()
	}
	return err
}

// changed returns a channel closed at the next write to the store when
// the gateway behind l is hosted in this process, and nil (which never
// fires) otherwise: followers wait on it beside their timer.
func (l *link) changed() <-chan struct{} {
	if c, ok := l.c.(api.Changes); ok {
		return c.Changed()
	}
	return nil
}

// resolve reads task id, through the next gateway when this one stopped.
func (l *link) resolve(ctx context.Context, id string) (*apitype.Task, error) {
	var t *apitype.Task
	err := l.retry(ctx, true, func(c api.Client) (err error) {
		t, err = c.ResolveTask(ctx, id)
		return err
	})
	return t, err
}

// viewFlow reads flow id, through the next gateway when this one stopped.
func (l *link) viewFlow(ctx context.Context, id string) (apitype.FlowView, error) {
	var v apitype.FlowView
	err := l.retry(ctx, true, func(c api.Client) (err error) {
		v, err = c.ViewFlow(ctx, id)
		return err
	})
	return v, err
}

// submit records the task. When the gateway stops before it answers, a
// task with an idempotency key is asked for again through the next
// gateway, which returns the one task whether or not the first request
// made it. Without a key nobody can tell: submit says so, with exit 5.
func (l *link) submit(ctx context.Context, in apitype.CreateTaskInput) (*apitype.Task, bool, error) {
	var (
		t       *apitype.Task
		created bool
		last    error
	)
	err := l.retry(ctx, in.IdempotencyKey != "", func(c api.Client) (err error) {
		if errors.Is(last, api.ErrNoAnswer) {
			fmt.Fprintf(l.e.stderr, "The gateway stopped before it answered; asking the next one for idempotency key %q.\n", in.IdempotencyKey)
		}
		t, created, err = c.RunTask(ctx, in)
		last = err
		return err
	})
	switch {
	case !errors.Is(err, api.ErrNoAnswer):
		return t, created, err
	case in.IdempotencyKey == "":
		return nil, false, exitStatus{code: exitUnknown, msg: fmt.Sprintf(
			"%v, so whether the task was created is unknown: look for it with flowgate tasks list --owner %s before you run it again. "+
				"With --idempotency-key KEY a repeat never runs it twice, and this command finds out by itself", err, in.OwnerKey)}
	}
	return nil, false, exitStatus{code: exitUnknown, msg: fmt.Sprintf(
		"%v; no gateway answered after %d tries: run the same command again; idempotency key %q makes sure the task runs once", err, linkTries, in.IdempotencyKey)}
}

// lostSight is the answer of a command that created task t and then could
// reach no gateway or store to follow it: the task exists, its outcome is
// unknown here (exit 5), and this is how to learn it.
func lostSight(t *apitype.Task, err error) error {
	return exitStatus{code: exitUnknown, msg: fmt.Sprintf(
		"lost sight of task %s (%v); it exists, was %s when last seen, and goes on under its shim. "+
			"Follow it: flowgate tasks logs %s -f; its outcome: flowgate tasks show %s", t.ID, err, t.Status, t.ID, t.ID)}
}

// lostFlow is the answer of a command that followed flow id and then could
// reach no gateway to follow it on: the flow exists, its outcome is
// unknown here (exit 5), and this is how to learn it.
func lostFlow(id string, err error) error {
	return exitStatus{code: exitUnknown, msg: fmt.Sprintf(
		"lost sight of flow %s (%v); it exists and goes on under the next gateway. Its state: flowgate tasks flow show %s", id, err, id)}
}
