package pluginclient_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A plugin's callbacks go to the Host Connect was given until BindHost
// hands them to another, over the same connection: this is how the
// gateway adopts a plugin it started before the supervisor that runs it,
// refusing its calls until then.
func TestBindHostMovesLaterCallbacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	refusing := errHost{err: fmt.Errorf("%w: not adopted yet", sdk.ErrPluginShutdown)}
	remote, p, _ := remoteHost(t, refusing)

	mem := sdktest.NewHost()
	f, err := mem.NewFlow("probe", "adopted", nil)
	require.NoError(t, err)
	_, err = remote.GetFlow(ctx, f.ID)
	require.ErrorIs(t, err, sdk.ErrPluginShutdown, "refused before BindHost")

	p.BindHost(mem)
	got, err := remote.GetFlow(ctx, f.ID)
	require.NoError(t, err, "answered by the bound Host")
	require.Equal(t, f.ID, got.ID)
}
