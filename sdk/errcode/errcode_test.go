package errcode_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk/errcode"
)

// Every entry is found by its sentinel, also wrapped, and by its name;
// names and sentinels are unique.
func TestTable(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, c := range errcode.All() {
		require.False(t, names[c.Name], "duplicate code %s", c.Name)
		names[c.Name] = true
		got, ok := errcode.Of(fmt.Errorf("flow f: %w", c.Err))
		require.True(t, ok)
		require.Equal(t, c.Name, got.Name)
		got, ok = errcode.Named(c.Name)
		require.True(t, ok)
		require.Equal(t, c.Err, got.Err)
	}
	_, ok := errcode.Of(fmt.Errorf("disk on fire"))
	require.False(t, ok)
	_, ok = errcode.Named("internal")
	require.False(t, ok)
}
