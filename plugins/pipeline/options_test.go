package pipeline_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// Commands reads the stage path once: the set it returns answers every
// name from what the directories held then, so a dry run that checks
// many stage names lists them once, not once per name.
func TestCommandsReadTheStagePathOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "shout")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\ntr a-z A-Z\n"), 0o755))
	set := pipeline.Options{StagePath: []string{dir}, PluginStages: []sdk.Stage{{Name: "llm.invoke"}}}.Commands()
	require.NoError(t, os.Remove(exe))
	for _, name := range []string{"shout", "llm.invoke", "exec", "where"} {
		require.True(t, set.Has(name), name)
	}
	require.False(t, set.Has("gog.send"))
}
