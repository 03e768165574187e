package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPaceQuickensAfterAChange(t *testing.T) {
	t.Parallel()
	var p pace
	var got []time.Duration
	for _, changed := range []bool{false, false, false, false, false, false, true, false} {
		got = append(got, p.after(changed))
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 100 * ms, 100 * ms, 10 * ms, 20 * ms}, got)
}
