package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// TestOutsideValuesReachStepsAsVariables: args, a previous step's JSON
// and an input response holding shell syntax reach a strict_refs
// workflow's step through variables it quotes, and none of it runs.
func TestOutsideValuesReachStepsAsVariables(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, cwd := start(t, h, "refs-env.lobster", map[string]any{"name": "$(touch pwned-arg)"})
		c.runner.next(t, h, f.ID)
		f = decide(t, h, f.ID, "review", map[string]any{"response": map[string]any{"note": "`touch pwned-response`"}, "by": "alice"})
		require.Equal(t, sdk.FlowRunning, f.Status, f.BlockedSummary)
		report := c.runner.next(t, h, f.ID)
		require.Equal(t, "$(touch pwned-json)", report.Spec.Env["LOBSTER_STEP_FETCH_JSON_USER_ID"])
		require.NotContains(t, report.Spec.Env, "LOBSTER_STEP_NOPE_STDOUT", "a variable of no step is left unset")

		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		var out []string
		require.NoError(t, json.Unmarshal(st.Output, &out))
		require.Equal(t, []string{"$(touch pwned-arg)|$(touch pwned-json)|a;touch pwned-list|`touch pwned-response`|"}, out)
		for _, f := range []string{"pwned-arg", "pwned-json", "pwned-list", "pwned-response"} {
			_, err := os.Stat(filepath.Join(cwd, f))
			require.ErrorIs(t, err, os.ErrNotExist, "%s must not have run", f)
		}
	})
}
