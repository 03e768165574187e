package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readCommands is every command that only reads, as a user types it (the
// ids need not exist: on a missing home nothing is looked up).
var readCommands = [][]string{
	{"tasks"}, {"tasks", "list"}, {"tasks", "show", "t1"}, {"tasks", "logs", "t1"},
	{"tasks", "flow", "list"}, {"tasks", "flow", "show", "f1"},
	{"tasks", "audit"}, {"tasks", "maintenance"}, {"check"}, {"approvals"},
	{"cron", "list"}, {"cron", "show", "j1"}, {"cron", "runs", "j1"}, {"cron", "status"},
	{"plugins", "list"}, {"gateway", "status"},
}

// A read-only command on a home that does not exist (a mistyped --home)
// exits 1, says so, and creates nothing.
func TestReadCommandsNeverCreateAHome(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "typo")
	for _, args := range readCommands {
		name := strings.Join(args, " ")
		code, _, errOut := run(t, missing, args...)
		require.Equal(t, 1, code, "%s: %s", name, errOut)
		require.Contains(t, errOut, "no flowgate home at "+missing+" (create one with `flowgate gateway` or any command that runs work)", name)
		require.NoDirExists(t, missing, name)
	}
}
