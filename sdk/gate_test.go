package sdk_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

func TestParseGate(t *testing.T) {
	t.Parallel()
	for wait, want := range map[string]bool{
		``:                          false,
		`null`:                      false,
		`[1]`:                       false,
		`{"kind":"timer"}`:          false,
		`{"kind":"input","step":1}`: false,
		`{"kind":"approval","step":"s","own":{"x":1}}`: true,
		`{"kind":"input"}`: true,
	} {
		g, ok := sdk.ParseGate(json.RawMessage(wait))
		require.Equal(t, want, ok, wait)
		if ok {
			require.True(t, g.IsGate())
		}
	}
}
