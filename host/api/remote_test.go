package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

func ptr[T any](v T) *T { return &v }

// TestRemoteMatchesLocal drives every Client method through the socket and
// requires the answers Local gives for the same records.
func TestRemoteMatchesLocal(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	local, remote := g.local, g.remote

	wantStatus, err := local.Status(ctx)
	require.NoError(t, err)
	gotStatus, err := remote.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, wantStatus, gotStatus)

	// CreateFlow: state travels as JSON, absent stays absent.
	f1, err := remote.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "team/a b", ControllerID: "ctl", Goal: "ship it",
		CurrentStep: "plan", State: json.RawMessage(`{"step":1}`), NotifyPolicy: "silent", Origin: "/src"})
	require.NoError(t, err)
	require.Equal(t, json.RawMessage(`{"step":1}`), f1.State)
	v1, err := local.ViewFlow(ctx, f1.ID)
	require.NoError(t, err)
	require.Equal(t, v1.Flow, f1)
	f2, err := local.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "other", ControllerID: "ctl2", Goal: "second"})
	require.NoError(t, err)
	require.Nil(t, f2.State)

	// RunTask: detached, idempotent, and linked to a managed flow.
	in := apitype.CreateTaskInput{OwnerKey: "me", Label: "build", IdempotencyKey: "key/with slash %",
		Spec: sdk.TaskSpec{Argv: []string{"make", "all"}, Env: map[string]string{"A": "1"}, Cwd: "/tmp",
			Timeout: sdk.Duration(90 * time.Second), Retry: &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(time.Second)}}}
	t1, created, err := remote.RunTask(ctx, in)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, sdk.TaskQueued, t1.Status)
	again, created, err := remote.RunTask(ctx, in)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, t1, again)
	t2, created, err := remote.RunTask(ctx, apitype.CreateTaskInput{FlowID: f1.ID, Spec: sdk.TaskSpec{Shell: "echo hi"}, IdempotencyKey: ".."})
	require.NoError(t, err)
	require.True(t, created)
	t3, _, err := local.RunTask(ctx, apitype.CreateTaskInput{FlowID: f1.ID, Runtime: "agent", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)

	// ResolveTask by id and by idempotency keys a path cannot hold plainly.
	for _, token := range []string{t1.ID, "key/with slash %", "..", t3.ID} {
		want, err := local.ResolveTask(ctx, token)
		require.NoError(t, err, token)
		got, err := remote.ResolveTask(ctx, token)
		require.NoError(t, err, token)
		require.Equal(t, want, got, token)
	}
	got, err := remote.ResolveTask(ctx, t2.ID)
	require.NoError(t, err)
	require.Equal(t, t2, got)

	// ListTasks with every filter and paging.
	taskFilters := []apitype.TaskFilter{
		{},
		{Status: sdk.TaskQueued},
		{Runtime: "agent"},
		{FlowID: f1.ID},
		{OwnerKey: "me"},
		{Limit: 1},
		{Limit: 2, After: t3.ID},
		{Limit: -1},
	}
	for _, f := range taskFilters {
		want, err := local.ListTasks(ctx, f)
		require.NoError(t, err, "%+v", f)
		got, err := remote.ListTasks(ctx, f)
		require.NoError(t, err, "%+v", f)
		require.NotEmpty(t, got.Tasks, "%+v", f)
		require.Equal(t, want, got, "%+v", f)
	}
	empty, err := remote.ListTasks(ctx, apitype.TaskFilter{OwnerKey: "nobody"})
	require.NoError(t, err)
	require.Empty(t, empty.Tasks)
	require.Empty(t, empty.Next)

	// ViewFlows with every filter and paging; ViewFlow by id and owner key.
	flowFilters := []apitype.FlowFilter{
		{},
		{Status: sdk.FlowQueued},
		{OwnerKey: "team/a b"},
		{ControllerID: "ctl2"},
		{SyncMode: sdk.SyncTaskMirrored},
		{Limit: 1},
		{Limit: 1, After: f2.ID},
	}
	for _, f := range flowFilters {
		want, err := local.ViewFlows(ctx, f)
		require.NoError(t, err, "%+v", f)
		got, err := remote.ViewFlows(ctx, f)
		require.NoError(t, err, "%+v", f)
		require.NotEmpty(t, got.Flows, "%+v", f)
		require.Equal(t, want, got, "%+v", f)
	}
	for _, token := range []string{f1.ID, "team/a b", "other", t1.FlowID} {
		want, err := local.ViewFlow(ctx, token)
		require.NoError(t, err, token)
		got, err := remote.ViewFlow(ctx, token)
		require.NoError(t, err, token)
		require.Equal(t, want, got, token)
	}

	// UpdateFlow: state null stays null, wait is set, a step pointer applies.
	up, err := remote.UpdateFlow(ctx, f1.ID, f1.Revision, apitype.FlowPatch{Status: sdk.FlowWaiting,
		State: json.RawMessage(`null`), Wait: json.RawMessage(`{"kind":"approval","prompt":"ok?"}`), CurrentStep: ptr("gate")})
	require.NoError(t, err)
	require.Equal(t, f1.Revision+1, up.Revision)
	require.Equal(t, json.RawMessage(`null`), up.State)
	require.Equal(t, "gate", up.CurrentStep)
	v1, err = local.ViewFlow(ctx, f1.ID)
	require.NoError(t, err)
	require.Equal(t, v1.Flow, up)

	// CancelTask and CancelFlow.
	ct, err := remote.CancelTask(ctx, t1.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, ct.Status)
	want, err := local.ResolveTask(ctx, t1.ID)
	require.NoError(t, err)
	require.Equal(t, want, ct)
	res, err := remote.CancelFlow(ctx, f1.ID, "carol")
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, res.Flow.Status)
	hist, err := local.History(ctx, f1.ID, 0, 0)
	require.NoError(t, err)
	require.Equal(t, "carol", hist.Entries[len(hist.Entries)-1].By, "the cancel names who asked")
	require.Len(t, res.Tasks, 2)
	require.Zero(t, res.Active)
	v1, err = local.ViewFlow(ctx, f1.ID)
	require.NoError(t, err)
	require.Equal(t, v1.Flow, res.Flow)
	require.Equal(t, v1.Tasks, res.Tasks)

	wantCounts, err := local.CountFlows(ctx)
	require.NoError(t, err)
	gotCounts, err := remote.CountFlows(ctx)
	require.NoError(t, err)
	require.Equal(t, wantCounts, gotCounts)
	require.Equal(t, 3, gotCounts.Total)

	wantStatus, err = local.Status(ctx)
	require.NoError(t, err)
	gotStatus, err = remote.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, wantStatus, gotStatus)
	require.Equal(t, 3, gotStatus.Tasks[sdk.TaskCancelled])
}

// TestRemoteErrorsMatchLocal requires every refusal to cross the socket
// with its sentinel and its message unchanged.
func TestRemoteErrorsMatchLocal(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()

	managed, err := g.local.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	mirrored, _, err := g.local.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	done, err := g.local.CancelTask(ctx, mirrored.ID)
	require.NoError(t, err)
	ended, err := g.local.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "ended"})
	require.NoError(t, err)
	ended, err = g.local.UpdateFlow(ctx, ended.ID, ended.Revision, apitype.FlowPatch{Status: sdk.FlowSucceeded})
	require.NoError(t, err)
	// A flow with a cancel request still waiting for a running child.
	cancelling, err := g.local.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "cancelling"})
	require.NoError(t, err)
	_, _, err = g.eng.CreateTask(engine.CreateTaskInput{FlowID: cancelling.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)
	res, err := g.local.CancelFlow(ctx, cancelling.ID, "")
	require.NoError(t, err)
	require.Equal(t, 1, res.Active)

	cases := []struct {
		name     string
		call     func(c api.Client) error
		sentinel error
	}{
		{"resolve missing task", func(c api.Client) error { _, err := c.ResolveTask(ctx, "nope"); return err }, sdk.ErrNotFound},
		{"resolve empty token", func(c api.Client) error { _, err := c.ResolveTask(ctx, ""); return err }, sdk.ErrInvalid},
		{"resolve blank token", func(c api.Client) error { _, err := c.ResolveTask(ctx, " "); return err }, sdk.ErrInvalid},
		{"resolve dot", func(c api.Client) error { _, err := c.ResolveTask(ctx, "."); return err }, sdk.ErrNotFound},
		{"view missing flow", func(c api.Client) error { _, err := c.ViewFlow(ctx, "../x"); return err }, sdk.ErrNotFound},
		{"view empty token", func(c api.Client) error { _, err := c.ViewFlow(ctx, ""); return err }, sdk.ErrInvalid},
		{"cancel missing task", func(c api.Client) error { _, err := c.CancelTask(ctx, "nope"); return err }, sdk.ErrNotFound},
		{"cancel ended task", func(c api.Client) error { _, err := c.CancelTask(ctx, done.ID); return err }, sdk.ErrTerminal},
		{"cancel ended flow", func(c api.Client) error { _, err := c.CancelFlow(ctx, ended.ID, ""); return err }, sdk.ErrTerminal},
		{"cancel missing flow", func(c api.Client) error { _, err := c.CancelFlow(ctx, "nope", ""); return err }, sdk.ErrNotFound},
		{"create flow without goal", func(c api.Client) error {
			_, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c"})
			return err
		}, sdk.ErrInvalid},
		{"create mirrored flow", func(c api.Client) error {
			_, err := c.CreateFlow(ctx, apitype.CreateFlowInput{SyncMode: sdk.SyncTaskMirrored, OwnerKey: "o", ControllerID: "c", Goal: "g"})
			return err
		}, sdk.ErrInvalid},
		{"run nothing", func(c api.Client) error {
			_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o"})
			return err
		}, sdk.ErrInvalid},
		{"run in missing flow", func(c api.Client) error {
			_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{FlowID: "nope", Spec: sdk.TaskSpec{Shell: "true"}})
			return err
		}, sdk.ErrNotFound},
		{"run in mirrored flow", func(c api.Client) error {
			_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{FlowID: mirrored.FlowID, Spec: sdk.TaskSpec{Shell: "true"}})
			return err
		}, sdk.ErrNotManaged},
		{"run as another owner", func(c api.Client) error {
			_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{FlowID: managed.ID, OwnerKey: "x", Spec: sdk.TaskSpec{Shell: "true"}})
			return err
		}, sdk.ErrOwnerMismatch},
		{"run in cancelling flow", func(c api.Client) error {
			_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{FlowID: cancelling.ID, Spec: sdk.TaskSpec{Shell: "true"}})
			return err
		}, sdk.ErrCancelRequested},
		{"run in ended flow", func(c api.Client) error {
			_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{FlowID: ended.ID, Spec: sdk.TaskSpec{Shell: "true"}})
			return err
		}, sdk.ErrTerminal},
		{"update mirrored flow", func(c api.Client) error {
			_, err := c.UpdateFlow(ctx, mirrored.FlowID, 0, apitype.FlowPatch{})
			return err
		}, sdk.ErrNotManaged},
		{"update to cancelled", func(c api.Client) error {
			_, err := c.UpdateFlow(ctx, managed.ID, managed.Revision, apitype.FlowPatch{Status: sdk.FlowCancelled})
			return err
		}, sdk.ErrInvalid},
		{"update ended flow", func(c api.Client) error {
			_, err := c.UpdateFlow(ctx, ended.ID, ended.Revision, apitype.FlowPatch{Status: sdk.FlowRunning})
			return err
		}, sdk.ErrTerminal},
		{"update cancelling flow", func(c api.Client) error {
			_, err := c.UpdateFlow(ctx, cancelling.ID, res.Flow.Revision, apitype.FlowPatch{Status: sdk.FlowSucceeded})
			return err
		}, sdk.ErrCancelRequested},
		{"list unknown task status", func(c api.Client) error {
			_, err := c.ListTasks(ctx, apitype.TaskFilter{Status: "done"})
			return err
		}, sdk.ErrInvalid},
		{"list unknown flow status", func(c api.Client) error {
			_, err := c.ViewFlows(ctx, apitype.FlowFilter{Status: "done"})
			return err
		}, sdk.ErrInvalid},
		{"list unknown mode", func(c api.Client) error {
			_, err := c.ViewFlows(ctx, apitype.FlowFilter{SyncMode: "auto"})
			return err
		}, sdk.ErrInvalid},
	}
	for _, tc := range cases {
		requireSameError(t, tc.call(g.local), tc.call(g.remote), tc.sentinel, tc.name)
	}
}

// TestRemoteRefusalsWithoutTheEngine covers input HTTP cannot carry as is:
// the Remote refuses it itself with the sentinel Local would give.
func TestRemoteRefusalsWithoutTheEngine(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	cases := []struct {
		name     string
		call     func(c api.Client) error
		sentinel error
	}{
		{"cancel empty task id", func(c api.Client) error { _, err := c.CancelTask(ctx, ""); return err }, sdk.ErrNotFound},
		{"cancel empty flow id", func(c api.Client) error { _, err := c.CancelFlow(ctx, "", ""); return err }, sdk.ErrNotFound},
		{"update empty flow id", func(c api.Client) error {
			_, err := c.UpdateFlow(ctx, "", 0, apitype.FlowPatch{})
			return err
		}, sdk.ErrNotFound},
		{"state that is not JSON", func(c api.Client) error {
			_, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", State: json.RawMessage(`{bad`)})
			return err
		}, sdk.ErrInvalid},
		{"wait that is not JSON", func(c api.Client) error {
			_, err := c.UpdateFlow(ctx, "f", 0, apitype.FlowPatch{Wait: json.RawMessage(`[`)})
			return err
		}, sdk.ErrInvalid},
	}
	for _, tc := range cases {
		require.ErrorIs(t, tc.call(g.local), tc.sentinel, tc.name)
		require.ErrorIs(t, tc.call(g.remote), tc.sentinel, tc.name)
	}
}

func TestRemoteRevisionConflict(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	f, err := g.remote.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	now, err := g.remote.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{CurrentStep: ptr("one")})
	require.NoError(t, err)

	_, err = g.remote.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{CurrentStep: ptr("two")})
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	rc, ok := errors.AsType[*sdk.RevisionConflictError](err)
	require.True(t, ok, "%T: %v", err, err)
	require.Equal(t, f.Revision, rc.Expected)
	require.Equal(t, now, rc.Current)
	_, localErr := g.local.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{CurrentStep: ptr("two")})
	require.Equal(t, localErr.Error(), err.Error())

	v, err := g.local.ViewFlow(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, "one", v.CurrentStep, "a refused update changes nothing")
}

// TestErrorCodesRoundTrip sends every sentinel through the wire from a
// client that returns it wrapped, and an unknown error as internal.
func TestErrorCodesRoundTrip(t *testing.T) {
	t.Parallel()
	sentinels := []error{sdk.ErrNotFound, sdk.ErrInvalid, sdk.ErrTerminal, sdk.ErrCancelRequested,
		sdk.ErrNotManaged, sdk.ErrOwnerMismatch, sdk.ErrIllegalTransition}
	fake := &fakeClient{viewFlow: func(_ context.Context, token string) (apitype.FlowView, error) {
		for _, s := range sentinels {
			if s.Error() == token {
				return apitype.FlowView{}, fmt.Errorf("%w: flow %q says so; do something else", s, token)
			}
		}
		if token == "conflict" {
			return apitype.FlowView{}, fmt.Errorf("while viewing: %w", &sdk.RevisionConflictError{Expected: 0, Current: &sdk.Flow{ID: "f", Revision: 7}})
		}
		return apitype.FlowView{}, errors.New("disk on fire")
	}}
	sock, _ := serve(t, api.NewHandler(fake, hclog.NewNullLogger()))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	defer remote.Close()
	ctx := t.Context()

	for _, s := range sentinels {
		_, err := remote.ViewFlow(ctx, s.Error())
		require.ErrorIs(t, err, s)
		require.Equal(t, fmt.Sprintf("%s: flow %q says so; do something else", s, s.Error()), err.Error())
		for _, other := range sentinels {
			if other != s {
				require.NotErrorIs(t, err, other)
			}
		}
	}
	_, err = remote.ViewFlow(ctx, "conflict")
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	rc, ok := errors.AsType[*sdk.RevisionConflictError](err)
	require.True(t, ok)
	require.Equal(t, int64(0), rc.Expected)
	require.Equal(t, int64(7), rc.Current.Revision)
	require.Equal(t, "while viewing: revision conflict on flow f: expected revision 0, current revision is 7; re-read the flow and retry", err.Error())

	_, err = remote.ViewFlow(ctx, "other")
	require.EqualError(t, err, "disk on fire")
	for _, s := range append(sentinels, sdk.ErrRevisionConflict, api.ErrNoGateway) {
		require.NotErrorIs(t, err, s)
	}
}

func TestRemoteHonoursContext(t *testing.T) {
	t.Parallel()
	fake := &fakeClient{listTasks: func(ctx context.Context, _ apitype.TaskFilter) (apitype.TaskPage, error) {
		<-ctx.Done()
		return apitype.TaskPage{}, ctx.Err()
	}}
	sock, _ := serve(t, api.NewHandler(fake, hclog.NewNullLogger()))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	defer remote.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = remote.ListTasks(ctx, apitype.TaskFilter{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 2*time.Second)

	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	_, err = remote.Status(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

func TestRemoteClose(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	require.NoError(t, g.remote.Close())
	require.NoError(t, g.remote.Close())
	_, err := g.remote.Status(t.Context())
	require.ErrorIs(t, err, net.ErrClosed)
}

// TestRemoteGatewayGone requires a call to a gateway that stopped to fail
// with ErrNoGateway, so the CLI can say so.
func TestRemoteGatewayGone(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	_, err := g.remote.Status(t.Context())
	require.NoError(t, err)
	require.NoError(t, g.srv.Close())
	_, err = g.remote.CountFlows(t.Context())
	require.ErrorIs(t, err, api.ErrNoGateway)
	require.Contains(t, err.Error(), g.sock)
}
