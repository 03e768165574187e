package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func TestSessionStepKeys(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("agent.yaml", []byte(`steps:
  - id: work
    run: agent
    resume_prompt: carry on where you stopped
  - id: judge
    run: judge
    fresh: true
`))
	require.NoError(t, err)
	require.Equal(t, "carry on where you stopped", wf.Steps[0].ResumePrompt)
	require.False(t, wf.Steps[0].Fresh)
	require.True(t, wf.Steps[1].Fresh)

	for name, tc := range map[string]struct{ file, want string }{
		"prompt not a string": {"steps:\n  - id: a\n    run: x\n    resume_prompt: 3\n", "agent.yaml:4:5: steps[0].resume_prompt: Workflow step a resume_prompt must be a non-empty string"},
		"fresh not a bool":    {"steps:\n  - id: a\n    run: x\n    fresh: yes\n", "steps[0].fresh: Workflow step a fresh must be true or false"},
		"on a gate":           {"steps:\n  - id: a\n    approval: ok?\n    fresh: true\n", "steps[0].fresh: Workflow step a fresh applies to steps with run or command only"},
		"both":                {"steps:\n  - id: a\n    run: x\n    fresh: true\n    resume_prompt: go\n", "Workflow step a fresh: true never continues a session"},
	} {
		_, err := flows.Parse("agent.yaml", []byte(tc.file))
		require.ErrorContains(t, err, tc.want, name)
	}
}
