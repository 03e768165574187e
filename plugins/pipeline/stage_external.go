package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/filetrust"
)

// StageArgsEnv is the variable that gives an executable stage its
// arguments as Lobster's args object: the named flags, and the positional
// ones under "_".
const StageArgsEnv = "FLOWGATE_STAGE_ARGS"

// ExecutableStage is a stage provided by an executable on the stage path
// (Options.StagePath).
type ExecutableStage struct {
	// Name is the file's name, which a pipeline stage names ("summarize").
	Name string
	// Path is the executable.
	Path string
	// Description and SideEffects come from the file "<Path>.json"
	// ({"description": "…", "sideEffects": ["network"]}) when it exists;
	// else the description names the path and the side effect is
	// "local_exec".
	Description string
	SideEffects []string
}

// ExecutableStages lists the executable stages of the directories dirs,
// sorted by name. A stage is a regular file someone may execute whose name
// does not end in ".json"; when two directories hold one of the same name,
// the first directory's wins. Directories that do not exist are skipped.
func ExecutableStages(dirs []string) []ExecutableStage {
	seen := map[string]bool{}
	var out []ExecutableStage
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if seen[name] || strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
				continue
			}
			path := filepath.Join(dir, name)
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
				continue
			}
			seen[name] = true
			out = append(out, describeStage(name, path))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// describeStage reads the sidecar "<path>.json" of an executable stage.
func describeStage(name, path string) ExecutableStage {
	st := ExecutableStage{Name: name, Path: path, Description: "Executable stage " + path, SideEffects: []string{"local_exec"}}
	b, err := os.ReadFile(path + ".json")
	if err != nil {
		return st
	}
	var d struct {
		Description string   `json:"description"`
		SideEffects []string `json:"sideEffects"`
	}
	if json.Unmarshal(b, &d) != nil {
		st.Description += " (its " + filepath.Base(path) + ".json is not valid JSON)"
		return st
	}
	if d.Description != "" {
		st.Description = d.Description
	}
	if d.SideEffects != nil {
		st.SideEffects = d.SideEffects
	}
	return st
}

// MissingStageHint says how to provide a stage nobody provides: an
// executable on the stage path, or a controller plugin.
func MissingStageHint(name string) string {
	return fmt.Sprintf("no built-in stage has this name, no controller plugin of the gateway provides it and no executable %q is on the stage path; to add it, put an executable named %s in $FLOWGATE_HOME/%s or in a directory listed under stage_path in gateway.yaml (it gets the items as a JSON array on stdin and its arguments as argv, and prints JSON), or add a controller plugin that provides it (sdk.Info.Stages) under plugins: in gateway.yaml", name, name, StagesDir)
}

// externalCommands are the executable stages on the stage path as
// commands. Each runs as a task, as exec does: the executable with the
// stage's arguments as argv ("--k=v", a bare "--k", then the positional
// ones), the items as a JSON array on stdin and the args object in
// StageArgsEnv. Its stdout is one JSON value, an array spread into items;
// an empty stdout is no items.
func (p *pipe) externalCommands() []*flows.Command {
	stages := p.r.executableStages()
	cmds := make([]*flows.Command, len(stages))
	for i, st := range stages {
		cmds[i] = &flows.Command{Name: st.Name, Description: st.Description, SideEffects: st.SideEffects, Run: func(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
			return p.runExecutable(ctx, st, call)
		}}
	}
	return cmds
}

// executableStages lists the stage path's stages once per pass.
func (r *run) executableStages() []ExecutableStage {
	if r.stages == nil {
		r.stages = ExecutableStages(r.opts.StagePath)
		if r.stages == nil {
			r.stages = []ExecutableStage{}
		}
	}
	return r.stages
}

func (p *pipe) runExecutable(ctx context.Context, st ExecutableStage, call *flows.Call) (flows.StageOutput, error) {
	argv := []string{st.Path}
	for _, k := range slices.Sorted(maps.Keys(call.Args.Named)) {
		if s, ok := call.Args.Named[k].(string); ok {
			argv = append(argv, "--"+k+"="+s)
		} else {
			argv = append(argv, "--"+k)
		}
	}
	argv = append(argv, call.Args.Positional...)
	input := call.Items
	if input == nil {
		input = []any{}
	}
	in, err := json.Marshal(input)
	if err != nil {
		return flows.StageOutput{}, err
	}
	args, err := json.Marshal(call.Args)
	if err != nil {
		return flows.StageOutput{}, err
	}
	// Checked before the stage's task is created, not when a later pass
	// reads the outcome of one that ran.
	if _, created := p.r.tasks[p.taskKey(call)]; !created {
		if err := filetrust.Runnable(st.Path); err != nil {
			return flows.StageOutput{}, stageError(st, fmt.Errorf("refused to run it: %w", err))
		}
	}
	spec := sdk.TaskSpec{Argv: argv, Input: string(in)}
	out, err := p.task(ctx, call, spec, map[string]string{StageArgsEnv: string(args)})
	if err != nil || out == nil {
		return flows.StageOutput{}, stageError(st, err)
	}
	if strings.TrimSpace(*out) == "" {
		return flows.StageOutput{Items: []any{}}, nil
	}
	items, err := execItems(*out, true)
	return flows.StageOutput{Items: items}, stageError(st, err)
}

// stageError names the executable stage a failure came from.
func stageError(st ExecutableStage, err error) error {
	if err == nil || err == errStageWaits {
		return err
	}
	return fmt.Errorf("stage %s (%s): %w", st.Name, st.Path, err)
}
