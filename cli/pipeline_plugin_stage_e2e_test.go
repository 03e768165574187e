package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
)

// stagePluginHome is a home whose gateway.yaml runs this test binary as
// the controller plugins names (see stagePlugin), and the file their
// note.once stage writes.
func stagePluginHome(t *testing.T, names ...string) (home, notes string) {
	t.Helper()
	home = shortHome(t)
	notes = filepath.Join(t.TempDir(), "notes")
	cfg := "plugins:\n"
	for _, name := range names {
		cfg += "  - name: " + name + "\n    path: " + os.Args[0] + "\n    args: [" + stagePluginCmd + ", " + name + "]\n    env: {" + notesEnv + ": " + notes + "}\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte(cfg), 0o600))
	return home, notes
}

// noteLines are the keys note.once noted, one per run of it.
func noteLines(t *testing.T, notes string) []string {
	t.Helper()
	b, err := os.ReadFile(notes)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// TestPluginStageThroughTheGateway runs pipeline strings whose stages a
// real controller plugin process provides, through the gateway the
// command hosts and the real pipeline plugin process: the plugin's stage
// transforms the items, commands.list names it with its plugin and side
// effects, and its failure fails the pipeline with the plugin's message.
func TestPluginStageThroughTheGateway(t *testing.T) {
	t.Parallel()
	home, notes := stagePluginHome(t, "stages")

	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", `exec --json --shell "echo '[\"a\",\"b\"]'" | text.upper --suffix=! | note.once`)
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"protocolVersion":1,"ok":true,"status":"ok","output":["A!","B!"],"requiresApproval":null,"requiresInput":null}`, withoutFlowID(t, stdout))
	require.Len(t, noteLines(t, notes), 1)

	code, stdout, errOut = run(t, home, "pipeline", "run", "commands.list | where plugin==stages | pick name,sideEffects,plugin")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `[{"name":"note.once","sideEffects":["writes_file"],"plugin":"stages"},
		{"name":"remote.fail","sideEffects":["network"],"plugin":"stages"},
		{"name":"text.upper","sideEffects":[],"plugin":"stages"}]`, stdout)

	code, _, errOut = run(t, home, "pipeline", "run", `exec --json --shell "echo [1]" | remote.fail`)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stage remote.fail of plugin stages: the mail service refused the request: quota spent; try again in an hour")
}

// TestPluginStageRunsOncePerRun: a plugin stage before an approve gate
// is recorded in the flow's state with its output, so resuming the
// pipeline after the gate does not run it again, and the items after
// the gate are the ones it gave.
func TestPluginStageRunsOncePerRun(t *testing.T) {
	t.Parallel()
	home, notes := stagePluginHome(t, "stages")
	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", `exec --json --shell "echo '[\"x\"]'" | note.once | text.upper | approve --prompt ok? | map --wrap v`)
	require.Equal(t, 0, code, errOut)
	var env struct {
		Status           string
		RequiresApproval struct{ ApprovalID string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "needs_approval", env.Status)
	require.Len(t, noteLines(t, notes), 1)

	code, stdout, errOut = run(t, home, "pipeline", "resume", "--id", env.RequiresApproval.ApprovalID, "--approve", "yes", "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"protocolVersion":1,"ok":true,"status":"ok","output":[{"v":"X"}],"requiresApproval":null,"requiresInput":null}`, withoutFlowID(t, stdout))
	require.Len(t, noteLines(t, notes), 1, "note.once ran again after the gate")
}

// TestPluginStageClashingWithABuiltinIsRefused: a plugin that declares a
// stage named like a built-in one does not start, and the gateway says
// which plugin and which stage.
func TestPluginStageClashingWithABuiltinIsRefused(t *testing.T) {
	t.Parallel()
	home, _ := stagePluginHome(t, "clash")
	code, _, errOut := run(t, home, "pipeline", "run", "commands.list")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `plugin clash: stage "where" is a built-in stage, which a plugin cannot replace; rename the plugin's stage`)
}

// TestPluginStageClashBetweenPluginsIsRefused: two plugins that declare
// the same stage are a config mistake: the gateway does not start, and
// says which stage and which plugin has it.
func TestPluginStageClashBetweenPluginsIsRefused(t *testing.T) {
	t.Parallel()
	home, _ := stagePluginHome(t, "stages", "twin")
	code, _, errOut := run(t, home, "pipeline", "run", "commands.list")
	require.NotEqual(t, 0, code)
	require.Regexp(t, `plugin (stages|twin): stage "(note.once|remote.fail|text.upper)" is already provided by plugin (stages|twin); rename one of the two, or configure only one of them`, errOut)
}

// TestDryRunKnowsPluginStages: --dry-run and validate accept a stage the
// running gateway's plugin provides; with no gateway running they refuse
// it, saying that plugin stages could not be asked for.
func TestDryRunKnowsPluginStages(t *testing.T) {
	t.Parallel()
	home, _ := stagePluginHome(t, "stages")
	file := filepath.Join(t.TempDir(), "w.lobster")
	require.NoError(t, os.WriteFile(file, []byte("name: w\nsteps:\n  - id: up\n    pipeline: text.upper\n"), 0o600))

	code, _, errOut := run(t, home, "pipeline", "run", "--dry-run", "text.upper --suffix=!")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "Unknown command: text.upper (no built-in stage has this name")
	require.Contains(t, errOut, "no gateway is running, so the stages of controller plugins are unknown: start flowgate gateway first if a plugin provides text.upper")

	fc, err := gateway.HomeConfig(home, "")
	require.NoError(t, err)
	serveGateway(t, gateway.Config{Home: home, File: fc, Owner: "dry-run test gateway", Builtins: plugins.Names()})

	code, _, errOut = run(t, home, "pipeline", "run", "--dry-run", "text.upper --suffix=!")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "[DRY RUN] Pipeline (1 stage):\n  1. text.upper  args: suffix=!\n", errOut)
	code, _, errOut = run(t, home, "pipeline", "validate", file)
	require.Equal(t, 0, code, errOut)

	code, _, errOut = run(t, home, "pipeline", "run", "--dry-run", "text.lower")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "or add a controller plugin that provides it (sdk.Info.Stages) under plugins: in gateway.yaml; the gateway's plugins are ")
}
