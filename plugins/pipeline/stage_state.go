package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flowgate/flowgate/flows"
)

// stateCommands are state.get, state.set and diff.last (lobster-format
// §14.3). They keep values in files under Options.StateDir, one directory
// per workflow file or pipeline string (stateScope), a key's value in
// "<key>.json" as Lobster lays it out. A pass runs a pipeline's stages
// again from the first, so each of these records its output in the flow's
// state the first time it runs and gives the recorded output on every
// later pass: a value is read once and written once per run.
func (p *pipe) stateCommands() []*flows.Command {
	return []*flows.Command{
		{Name: "state.get", Description: "Read a stored value: state.get KEY (null when none is stored)", SideEffects: []string{"reads_state"}, Run: p.stateGet},
		{Name: "state.set", Description: "Store the items under a key: state.set KEY (one item is stored as itself, several as an array); outputs the value", SideEffects: []string{"writes_state"}, Run: p.stateSet},
		{Name: "diff.last", Description: "Compare the items with the value stored under a key, and store them: diff.last --key K → {kind, key, changed, before, after}", SideEffects: []string{"writes_state"}, Run: p.diffLast},
	}
}

func (p *pipe) stateGet(_ context.Context, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	file, err := p.stateFile(call, "state.get")
	if err != nil {
		return flows.StageOutput{}, err
	}
	v, err := readValue(file)
	if err != nil {
		return flows.StageOutput{}, err
	}
	return p.record(call, []any{v}), nil
}

func (p *pipe) stateSet(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	file, err := p.stateFile(call, "state.set")
	if err != nil {
		return flows.StageOutput{}, err
	}
	v := itemsValue(call.Items)
	return p.store(ctx, call, file, v, []any{v})
}

func (p *pipe) diffLast(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	file, err := p.stateFile(call, "diff.last")
	if err != nil {
		return flows.StageOutput{}, err
	}
	before, err := readValue(file)
	if err != nil {
		return flows.StageOutput{}, err
	}
	after := itemsValue(call.Items)
	a, _ := json.Marshal(before) // maps marshal with sorted keys, so equal values compare equal
	b, _ := json.Marshal(after)
	key, _ := stateKey(call)
	item := map[string]any{"kind": "diff.last", "key": key, "changed": !bytes.Equal(a, b), "before": before, "after": after}
	return p.store(ctx, call, file, after, []any{item})
}

// store records out as the stage's output, makes the flow's state durable
// and then writes v to file. A gateway killed between the two leaves the
// file unwritten, so the next run's diff.last reports the change again:
// a change can be reported twice, never missed.
func (p *pipe) store(ctx context.Context, call *flows.Call, file string, v any, out []any) (flows.StageOutput, error) {
	res := p.record(call, out)
	if err := p.r.save(ctx, p.id); err != nil {
		p.hostErr = err // the pass ends; its event comes again
		return flows.StageOutput{}, errStageWaits
	}
	if err := writeValue(file, v); err != nil {
		return flows.StageOutput{}, err
	}
	return res, nil
}

// recorded is the output this stage recorded in an earlier pass.
func (p *pipe) recorded(call *flows.Call) (flows.StageOutput, bool) {
	items, ok := p.r.st.StageOut[p.outputKey(call)]
	return flows.StageOutput{Items: items}, ok
}

// record keeps items as this stage's output in the flow's state.
func (p *pipe) record(call *flows.Call, items []any) flows.StageOutput {
	if p.r.st.StageOut == nil {
		p.r.st.StageOut = map[string][]any{}
	}
	p.r.st.StageOut[p.outputKey(call)] = items
	return flows.StageOutput{Items: items}
}

func (p *pipe) outputKey(call *flows.Call) string {
	return fmt.Sprintf("%s:%d", p.stageID(call.Stage), p.iteration)
}

// itemsValue is what a stage stores of its items: one item as itself,
// any other number as the array (lobster-format §20).
func itemsValue(items []any) any {
	if len(items) == 1 {
		return items[0]
	}
	if items == nil {
		return []any{}
	}
	return items
}

// stateKey is the stage's key: its first positional argument, or --key.
func stateKey(call *flows.Call) (string, bool) {
	if len(call.Args.Positional) > 0 {
		return call.Args.Positional[0], true
	}
	k, ok := call.Args.String("key")
	return k, ok
}

// stateFile is the file of the stage's key.
func (p *pipe) stateFile(call *flows.Call, cmd string) (string, error) {
	if p.r.opts.StateDir == "" {
		return "", fmt.Errorf("%s keeps values under the gateway's home, which this pipeline controller was not given (%s is unset); run pipelines through flowgate", cmd, HomeEnv)
	}
	key, ok := stateKey(call)
	if !ok {
		if cmd == "diff.last" {
			return "", errors.New("diff.last requires --key")
		}
		return "", fmt.Errorf("%s requires a key: %s KEY", cmd, cmd)
	}
	name, err := keyFile(key)
	if err != nil {
		return "", err
	}
	return filepath.Join(p.r.opts.StateDir, p.r.stateScope(), name), nil
}

var (
	keyUnsafe = regexp.MustCompile(`[^a-z0-9._-]+`)
	keyRuns   = regexp.MustCompile(`_+`)
)

// safeName is s in lower case with each run of other characters than
// a-z, 0-9, ".", "_" and "-" made one "_".
func safeName(s string) string {
	return keyRuns.ReplaceAllString(keyUnsafe.ReplaceAllString(strings.ToLower(s), "_"), "_")
}

// keyFile is Lobster's file name for a state key (lobster-format §10.2):
// lower case, each run of other characters than a-z, 0-9, ".", "_" and
// "-" made one "_", one leading and one trailing "_" dropped.
func keyFile(key string) (string, error) {
	s := safeName(key)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "_"), "_")
	if s == "" || strings.Trim(s, ".") == "" {
		return "", fmt.Errorf("state key %q is empty/invalid; use letters, digits, '.', '_' or '-'", key)
	}
	return s + ".json", nil
}

// pipelinesScope is the state directory all pipeline strings share.
const pipelinesScope = "pipelines"

// stateScope is the directory, under the state directory, of this flow's
// keys: "<name>-<hash of its path>" for a workflow file, whose keys are
// its own, and pipelinesScope for a pipeline string, so that pipeline
// strings share their keys as Lobster's do.
func (r *run) stateScope() string {
	if r.st.File == "" {
		return pipelinesScope
	}
	name := strings.TrimSuffix(filepath.Base(r.st.File), filepath.Ext(r.st.File))
	sum := sha256.Sum256([]byte(r.st.File))
	name = safeName(name)
	return name + "-" + hex.EncodeToString(sum[:])[:12]
}

// readValue reads the JSON value in file; a missing file is null.
func readValue(file string) (any, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stored state %s: %w", file, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("stored state %s is not JSON (%v); remove the file to start over", file, err)
	}
	return v, nil
}

// writeValue replaces file with v as indented JSON, atomically (see
// writeAtomic). The file is 0600 and its directory 0700.
func writeValue(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(file, append(b, '\n')); err != nil {
		return fmt.Errorf("store state in %s: %w", file, err)
	}
	return nil
}
