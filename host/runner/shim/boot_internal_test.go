package shim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A claim is synced unless the attempt's start recorded the boot the
// shim runs in: only then does a gateway that finds no claim after a
// crash know that the machine did not restart since.
func TestClaimIsSyncedUnlessStartedInThisBoot(t *testing.T) {
	t.Parallel()
	boot := BootID()
	require.NotEmpty(t, boot, "this system tells its boot")
	require.True(t, Spec{}.claimSynced(), "a start without a boot (a gateway that synced every claim)")
	require.True(t, Spec{Boot: "an-earlier-boot"}.claimSynced(), "a start of another boot")
	require.False(t, Spec{Boot: boot}.claimSynced(), "a start of this boot")
}
