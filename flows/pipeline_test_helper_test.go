package flows_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// runPipe runs a pipeline string over input (a JSON array) with the
// built-in commands and returns the result items as JSON, what renderers
// printed, and the error.
func runPipe(t *testing.T, text, input string) (items string, rendered string, err error) {
	t.Helper()
	stages, perr := flows.ParsePipeline(text)
	require.NoError(t, perr)
	v, derr := flows.DecodeJSON([]byte(input))
	require.NoError(t, derr)
	in, _ := v.([]any)
	var out strings.Builder
	res, err := flows.RunPipeline(context.Background(), stages, 0, in, flows.Builtins(), &out)
	b, merr := json.Marshal(res.Items)
	require.NoError(t, merr)
	return string(b), out.String(), err
}

// stageCase is one expectation for a pipeline over an input.
type stageCase struct {
	name, pipeline, input, want string
}

// runStageCases checks each case's items (as JSON) or error message
// (want starting with "error: ").
func runStageCases(t *testing.T, cases []stageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := runPipe(t, tc.pipeline, tc.input)
			if msg, ok := strings.CutPrefix(tc.want, "error: "); ok {
				require.EqualError(t, err, msg)
				return
			}
			require.NoError(t, err)
			require.JSONEq(t, tc.want, got)
		})
	}
}
