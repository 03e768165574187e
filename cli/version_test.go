package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersionText(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/flowgate/flowgate", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-01T03:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	require.Equal(t, "flowgate v1.4.0\ncommit   0123456789abcdef (2026-12-01T03:00:00Z, with local changes)\ngo       go1.26.0 linux/arm64\n",
		versionText(bi, "linux/arm64"))

	installed := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20261201034500-0123456789ab"}}
	require.Equal(t, "flowgate v0.0.0-20261201034500-0123456789ab\ncommit   0123456789ab\ngo       go1.26.0 darwin/arm64\n",
		versionText(installed, "darwin/arm64"), "go install @latest: the commit is in the pseudo-version")

	require.Contains(t, versionText(nil, "linux/amd64"), "flowgate unknown\ncommit   unknown\n")
}
