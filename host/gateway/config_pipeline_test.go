package gateway_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
)

// TestConfigPipelineSection: pipeline.secret_env and pipeline.llm load,
// and an entry that is no variable name or a base URL that is no http
// URL is refused, naming the key.
func TestConfigPipelineSection(t *testing.T) {
	t.Parallel()
	fc, err := gateway.LoadConfig(writeConfig(t, "pipeline:\n  secret_env: [OPENAI_API_KEY]\n  llm: {base_url: https://api.example.com/v1, model: m}\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"OPENAI_API_KEY"}, fc.Pipeline.SecretEnv)
	require.Equal(t, "https://api.example.com/v1", fc.Pipeline.LLM.BaseURL)
	require.Equal(t, "m", fc.Pipeline.LLM.Model)

	for body, says := range map[string]string{
		"pipeline: {secret_env: [\"A=B\"]}\n":            `pipeline.secret_env[0] "A=B" is not a variable name`,
		"pipeline: {secret_env: [\"\"]}\n":               `pipeline.secret_env[0] "" is not a variable name`,
		"pipeline: {llm: {base_url: api.example.com}}\n": `pipeline.llm.base_url "api.example.com" is not an http or https URL`,
	} {
		_, err := gateway.LoadConfig(writeConfig(t, body))
		require.ErrorContains(t, err, says, body)
	}
}
