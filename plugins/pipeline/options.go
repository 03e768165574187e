package pipeline

import (
	"path/filepath"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// The environment a gateway gives the pipeline plugin's process
// (OptionsFrom reads it).
const (
	// HomeEnv is the gateway's home, $FLOWGATE_HOME.
	HomeEnv = "FLOWGATE_HOME"
	// StagePathEnv lists the directories of executable stages, separated
	// as PATH is (os.PathListSeparator).
	StagePathEnv = "FLOWGATE_STAGE_PATH"
	// LLMBaseURLEnv and LLMModelEnv are the model stages' default
	// endpoint and model (the config's pipeline.llm).
	LLMBaseURLEnv = "FLOWGATE_LLM_BASE_URL"
	LLMModelEnv   = "FLOWGATE_LLM_MODEL"
	// StageSecretEnvEnv lists, comma-separated, the gateway variables a
	// model stage's --secret-env may name (the config's
	// pipeline.secret_env).
	StageSecretEnvEnv = "FLOWGATE_STAGE_SECRET_ENV"
)

// Directories under the home that the pipeline controller owns.
const (
	// StateDir holds what state.set and diff.last store, one
	// directory per workflow file or pipeline string.
	StateDir = "pipeline-state"
	// StagesDir is the home's own directory of executable stages, always
	// searched first.
	StagesDir = "stages"
)

// Options is what the pipeline controller needs from the gateway. The
// zero value has no state directory (state.get, state.set and diff.last
// fail saying so) and no executable stages.
type Options struct {
	// StateDir is where state.set and diff.last keep values; empty means
	// they are not available.
	StateDir string
	// StagePath lists the directories searched, in order, for an
	// executable named like a stage no built-in command has.
	StagePath []string
	// DataDir is where the controller keeps values too large for a flow's
	// state (see the package doc's Limits). Empty keeps every value
	// inline, and a flow whose state would grow past its bound fails,
	// saying so.
	DataDir string
	// SharedStore keeps those values in the gateway's store instead
	// (sdk.Host.KeepValue), where every gateway of a store they share
	// reads them, also after the flow moved to another; a workflow's
	// output too, unless it is over sdk.MaxKeptValue (then a file in
	// DataDir). It keeps the values of state.set and diff.last in the
	// store too (sdk.Host.StoreValue), not under StateDir. The gateway
	// sets it on etcd (sdk.SharedStoreEnv).
	SharedStore bool
	// PluginStages are stages controller plugins provide, for Commands
	// (the CLI's dry runs take them from the running gateway). The
	// controller itself asks its sdk.Host instead.
	PluginStages []sdk.Stage
	// LLMBaseURL and LLMModel are the model stages' defaults, used when
	// a stage gives no --base-url or --model.
	LLMBaseURL, LLMModel string
	// SecretEnv lists the gateway variables a model stage may name with
	// --secret-env; any other name fails the stage.
	SecretEnv []string
}

// OptionsFrom returns the options of a gateway's home as getenv tells
// them: StateDir and StagesDir under $FLOWGATE_HOME, then the directories
// in $FLOWGATE_STAGE_PATH, the data directory of $FLOWGATE_DATA_DIR, and
// SharedStore when $FLOWGATE_SHARED_STORE is set.
// Without $FLOWGATE_HOME only the stage path and data directory are set.
func OptionsFrom(getenv func(string) string) Options {
	o := HomeOptions(getenv(HomeEnv), filepath.SplitList(getenv(StagePathEnv)))
	o.DataDir = getenv(sdk.DataDirEnv)
	o.SharedStore = getenv(sdk.SharedStoreEnv) != ""
	o.LLMBaseURL, o.LLMModel = getenv(LLMBaseURLEnv), getenv(LLMModelEnv)
	for name := range strings.SplitSeq(getenv(StageSecretEnvEnv), ",") {
		if name = strings.TrimSpace(name); name != "" {
			o.SecretEnv = append(o.SecretEnv, name)
		}
	}
	return o
}

// HomeOptions returns the options of home (which may be empty) with the
// extra stage directories stagePath after the home's own.
func HomeOptions(home string, stagePath []string) Options {
	var o Options
	if home != "" {
		o.StateDir = filepath.Join(home, StateDir)
		o.StagePath = append(o.StagePath, filepath.Join(home, StagesDir))
	}
	for _, d := range stagePath {
		if d != "" {
			o.StagePath = append(o.StagePath, d)
		}
	}
	return o
}

// CommandSet is the set of commands a pipeline stage may name, listed
// once by Options.Commands. The zero value holds none.
type CommandSet map[string]struct{}

// Has reports whether a pipeline stage may name the command.
func (s CommandSet) Has(name string) bool {
	_, ok := s[name]
	return ok
}

// Commands lists the commands a pipeline stage may name: the built-in
// ones (flows.Builtins, exec, approve, ask, state.get, state.set,
// diff.last), PluginStages, and the executables on the stage path. The
// stage path is read now, once: an executable added later is not in the
// set.
func (o Options) Commands() CommandSet {
	cmds := (&pipe{r: &run{opts: o, plugStages: o.PluginStages}}).commands()
	set := make(CommandSet, len(cmds))
	for name := range cmds {
		set[name] = struct{}{}
	}
	return set
}
