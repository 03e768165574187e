package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// RunnableTasksExcept passes over the tasks skip names, and its limit
// counts only the tasks it returns: a runner asks past the tasks it is
// launching already.
func TestRunnableTasksExceptPassesOverSkipped(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	var ids []string
	for _, owner := range []string{"a", "b", "c", "d"} {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: owner, Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	all, _, err := eng.RunnableTasks(0)
	require.NoError(t, err)
	require.Len(t, all, 4)
	launching := map[string]bool{all[0].ID: true, all[1].ID: true}
	skip := func(id string) bool { return launching[id] }

	one, _, err := eng.RunnableTasksExcept(1, skip)
	require.NoError(t, err)
	require.Len(t, one, 1)
	require.Equal(t, all[2].ID, one[0].ID, "the oldest task not skipped comes first")

	rest, _, err := eng.RunnableTasksExcept(0, skip)
	require.NoError(t, err)
	require.Len(t, rest, 2)
	require.Equal(t, []string{all[2].ID, all[3].ID}, []string{rest[0].ID, rest[1].ID})

	none, _, err := eng.RunnableTasksExcept(0, func(string) bool { return true })
	require.NoError(t, err)
	require.Empty(t, none)
	require.ElementsMatch(t, ids, []string{all[0].ID, all[1].ID, all[2].ID, all[3].ID})
}
