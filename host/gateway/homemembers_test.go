package gateway

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// A home remembers the member ids its gateways took, the latest
// keptMemberIDs of them, so that a gateway restarted with a new pid
// knows its predecessors' tasks for its own.
func TestHomeRemembersItsMemberIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.False(t, slices.Contains(homeMembers(dir), "node-a.1"), "an empty home ran nothing")
	for i := range keptMemberIDs + 5 {
		require.NoError(t, rememberMember(dir, fmt.Sprintf("node-a.%d", i)))
	}
	require.True(t, slices.Contains(homeMembers(dir), "node-a.5"))
	require.True(t, slices.Contains(homeMembers(dir), fmt.Sprintf("node-a.%d", keptMemberIDs+4)))
	require.False(t, slices.Contains(homeMembers(dir), "node-a.4"), "kept more than the bound")
	require.False(t, slices.Contains(homeMembers(dir), "node-b.5"))
	require.Len(t, homeMembers(dir), keptMemberIDs)
}
