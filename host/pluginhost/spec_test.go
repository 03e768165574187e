package pluginhost_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
)

// A plugin entry's on_finish and on_finish_webhook become where its
// flows' finish notifications go; a webhook that is not an http(s) URL
// is refused, naming the entry.
func TestSpecFinishNotify(t *testing.T) {
	t.Parallel()
	require.Nil(t, pluginhost.Spec{Name: "p"}.FinishNotify())
	s := pluginhost.Spec{Name: "p", OnFinish: "notify", OnFinishWebhook: "https://example.com/hook"}
	require.NoError(t, s.Validate())
	require.Equal(t, &sdk.FinishNotify{Command: "notify", Webhook: "https://example.com/hook"}, s.FinishNotify())
	err := pluginhost.Spec{Name: "p", Key: "plugins[2]", OnFinishWebhook: "ftp://x"}.Validate()
	require.ErrorContains(t, err, `plugins[2].on_finish: invalid input: on_finish webhook "ftp://x" is not an http or https URL`)
	require.ErrorIs(t, err, sdk.ErrInvalid)
}
