package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// oldGateway is a client whose gateway does not know the wait of
// ViewFlow, as one of an older flowgate: it refuses it as invalid.
type oldGateway struct {
	api.Client
	waits, views int
}

func (g *oldGateway) WaitFlow(context.Context, string, string, time.Duration) (apitype.FlowView, error) {
	g.waits++
	return apitype.FlowView{}, fmt.Errorf(`%w: unknown query parameter "mark"`, sdk.ErrInvalid)
}

func (g *oldGateway) ViewFlow(context.Context, string) (apitype.FlowView, error) {
	g.views++
	return apitype.FlowView{Flow: &sdk.Flow{ID: "f", Revision: 3}}, nil
}

func TestNextViewFallsBackToReadingAnOldGateway(t *testing.T) {
	t.Parallel()
	g := &oldGateway{}
	l := &link{c: g}
	require.NotNil(t, l.waiter())
	for range 2 {
		v, err := l.nextView(t.Context(), "f", "2")
		require.NoError(t, err)
		require.Equal(t, int64(3), v.Revision)
	}
	require.Equal(t, 1, g.waits, "a gateway that refused the wait once is not asked to wait again")
	require.Equal(t, 2, g.views)
	require.Nil(t, l.waiter(), "the follower reads on its timer from then on")
}
