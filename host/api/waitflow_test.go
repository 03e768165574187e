package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// notifyingLocal is a Local that tells of writes, as a gateway's own
// client does, and reports each check of a flow's revision it serves.
type notifyingLocal struct {
	*api.Local
	api.Broadcast
	views chan struct{}
}

func (n *notifyingLocal) FlowRevision(ctx context.Context, token string) (int64, error) {
	rev, err := n.Local.FlowRevision(ctx, token)
	n.views <- struct{}{}
	return rev, err
}

func TestWaitFlowAnswersAtTheWrite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	n := &notifyingLocal{Local: newLocal(t), views: make(chan struct{}, 16)}
	sock, _ := serve(t, api.NewHandler(n, hclog.NewNullLogger()))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	t.Cleanup(func() { remote.Close() })

	f, err := n.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	v, err := n.Local.ViewFlow(ctx, f.ID)
	require.NoError(t, err)

	type answer struct {
		v   apitype.FlowView
		err error
	}
	got := make(chan answer, 1)
	go func() {
		v, err := remote.WaitFlow(ctx, f.ID, api.FlowMark(v), api.MaxFlowWait)
		got <- answer{v, err}
	}()
	<-n.views // the gateway read the flow unchanged and waits for a write
	_, err = n.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{CurrentStep: new("next")})
	require.NoError(t, err)
	notified := time.Now()
	n.Notify()
	a := <-got
	require.Less(t, time.Since(notified), api.MaxFlowWait/2, "WaitFlow must answer at the write, not when the wait runs out")
	require.NoError(t, a.err)
	require.Equal(t, f.Revision+1, a.v.Revision, "WaitFlow must answer with the flow as the write left it")
	require.Equal(t, "next", a.v.CurrentStep)
}

func TestWaitFlowWithoutChangesAnswersAtOnce(t *testing.T) {
	t.Parallel()
	g := newGateway(t) // a Local, which cannot tell of writes
	ctx := t.Context()
	f, err := g.local.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	want, err := g.local.ViewFlow(ctx, f.ID)
	require.NoError(t, err)
	v, err := g.remote.WaitFlow(ctx, f.ID, api.FlowMark(want), api.MaxFlowWait)
	require.NoError(t, err)
	require.Equal(t, api.FlowMark(want), api.FlowMark(v))

	_, err = g.remote.WaitFlow(ctx, "nope", "", api.MaxFlowWait)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	r := do(t, g.sock, "GET", "/v1/flows/"+f.ID+"?mark=x&wait=soon", "")
	require.Contains(t, errorOf(t, r).Error.Message, `wait "soon" is not a whole number of milliseconds`)
}
