package flows_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// A pipeline: text that does not parse fails its step when the step runs,
// as in Lobster, so the file loads (and the step's on_error applies);
// PipelineErrors reports it at its position, in Lobster's words, for
// validate.
func TestUnparsedPipelineLoadsAndIsReported(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file string
		line int
		key  string
		msg  string
	}{
		{"pipeline_parse_error.lobster", 3, "steps[0].pipeline", "Workflow step p pipeline parse failed: Unclosed quote"},
		{"pipeline_branch.yaml", 6, "steps[0].parallel.branches[0].pipeline", "Workflow step p parallel branch b pipeline parse failed: Unclosed quote"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "unparsed", tt.file)
			wf, err := flows.Load(path)
			require.NoError(t, err)
			err = wf.PipelineErrors()
			var ferr *flows.Error
			require.ErrorAs(t, err, &ferr)
			abs, _ := filepath.Abs(path)
			require.Equal(t, abs, ferr.File)
			require.Equal(t, tt.line, ferr.Line)
			require.Equal(t, tt.key, ferr.Key)
			require.Equal(t, tt.msg, ferr.Msg)
		})
	}
}
