package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// stateCommands are state.get, state.set and diff.last (lobster-format
// §14.3). They keep values in files under Options.StateDir, one directory
// per workflow file or pipeline string (stateScope), a key's value in
// "<key>.json" as Lobster lays it out; with Options.SharedStore, in the
// gateway's store instead (see stateSlot). A pass runs a pipeline's stages
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

func (p *pipe) stateGet(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	slot, err := p.stateSlot(call, "state.get")
	if err != nil {
		return flows.StageOutput{}, err
	}
	v, err := p.readState(ctx, slot)
	if err != nil {
		return flows.StageOutput{}, err
	}
	return p.record(call, []any{v}), nil
}

func (p *pipe) stateSet(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	slot, err := p.stateSlot(call, "state.set")
	if err != nil {
		return flows.StageOutput{}, err
	}
	v := itemsValue(call.Items)
	return p.store(ctx, call, slot, v, []any{v})
}

func (p *pipe) diffLast(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	slot, err := p.stateSlot(call, "diff.last")
	if err != nil {
		return flows.StageOutput{}, err
	}
	before, err := p.readState(ctx, slot)
	if err != nil {
		return flows.StageOutput{}, err
	}
	after := itemsValue(call.Items)
	// Lobster compares the serialised values, so key order counts.
	changed := flows.Stringify(before) != flows.Stringify(after)
	key, _ := stateKey(call)
	item := flows.NewObject(5)
	for _, f := range []struct {
		k string
		v any
	}{{"kind", "diff.last"}, {"key", key}, {"changed", changed}, {"before", before}, {"after", after}} {
		item.Set(f.k, f.v)
	}
	return p.store(ctx, call, slot, after, []any{item})
}

// store records out as the stage's output, makes the flow's state durable
// and then writes v to slot. A gateway killed between the two leaves the
// value unwritten, so the next run's diff.last reports the change again:
// a change can be reported twice, never missed. A value too large for
// slot is refused before anything is recorded.
func (p *pipe) store(ctx context.Context, call *flows.Call, slot stateSlot, v any, out []any) (flows.StageOutput, error) {
	b, err := slot.encode(v)
	if err != nil {
		return flows.StageOutput{}, err
	}
	res := p.record(call, out)
	if err := p.r.save(ctx, p.id); err != nil {
		p.hostErr = err // the pass ends; its event comes again
		return flows.StageOutput{}, errStageWaits
	}
	if err := p.writeState(ctx, slot, b); err != nil {
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

// stateSlot is where the stage's key keeps its value.
func (p *pipe) stateSlot(call *flows.Call, cmd string) (stateSlot, error) {
	if err := p.stateHome(cmd); err != nil {
		return stateSlot{}, err
	}
	key, ok := stateKey(call)
	if !ok {
		if cmd == "diff.last" {
			return stateSlot{}, errors.New("diff.last requires --key")
		}
		return stateSlot{}, fmt.Errorf("%s requires a key: %s KEY", cmd, cmd)
	}
	return p.keySlot(cmd, key)
}

// stateHome refuses a stage of cmd when there is nowhere to keep values.
func (p *pipe) stateHome(cmd string) error {
	if p.r.opts.StateDir == "" && !p.r.opts.SharedStore {
		return fmt.Errorf("%s keeps values under the gateway's home, which this pipeline controller was not given (%s is unset); run pipelines through flowgate", cmd, HomeEnv)
	}
	return nil
}

// keySlot is where key keeps its value, for a stage of cmd.
func (p *pipe) keySlot(cmd, key string) (stateSlot, error) {
	if err := p.stateHome(cmd); err != nil {
		return stateSlot{}, err
	}
	shared := p.r.opts.SharedStore
	name, err := keyFile(key)
	if err != nil {
		return stateSlot{}, err
	}
	slot := stateSlot{scope: p.r.stateScope(), name: strings.TrimSuffix(name, ".json"), key: key, shared: shared}
	if !shared {
		slot.file = filepath.Join(p.r.opts.StateDir, slot.scope, name)
	} else if len(slot.scope) > sdk.MaxStoredName || len(slot.name) > sdk.MaxStoredName {
		return stateSlot{}, fmt.Errorf("%s: the key %q in scope %q is longer than the %d bytes the gateway's shared store takes for each; use a shorter key (or workflow file name)", cmd, slot.name, slot.scope, sdk.MaxStoredName)
	}
	return slot, nil
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
