package plugins_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins"
)

// Controllers holds a fresh instance of every first-party controller,
// under the name its Info reports.
func TestControllersAreTheBuiltins(t *testing.T) {
	t.Parallel()
	cs := plugins.Controllers()
	require.Equal(t, plugins.Names(), slices.Sorted(maps.Keys(cs)))
	for name, mk := range cs {
		c := mk(os.Getenv)
		info, err := c.Info(context.Background())
		require.NoError(t, err)
		require.Equal(t, name, info.Name)
	}
}
