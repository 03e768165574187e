package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// stateSlot is where a state key of state.get, state.set and diff.last
// keeps its value: the file "<scope>/<name>.json" under Options.StateDir, or,
// with Options.SharedStore, the gateway's store (sdk.Host.StoreValue
// under scope and name), one value every gateway of the shared store
// reads and writes, and which no flow's prune deletes.
type stateSlot struct {
	scope, name string
	// key is the key as the workflow gave it, for messages.
	key string
	// shared keeps the value in the gateway's store; file is the value's
	// file otherwise.
	shared bool
	file   string
}

// encode is v as the slot keeps it: indented JSON in a file, compact in
// the store, where one is refused over sdk.MaxKeptValue.
func (s stateSlot) encode(v any) ([]byte, error) {
	if !s.shared {
		return []byte(flows.StringifyIndent(v, "  ") + "\n"), nil
	}
	b := []byte(flows.Stringify(v))
	if len(b) > sdk.MaxKeptValue {
		return nil, fmt.Errorf("the value of state key %q is %d bytes of JSON, over the %d the gateway's shared store keeps under one key; store less under it, or split it over several keys", s.key, len(b), sdk.MaxKeptValue)
	}
	return b, nil
}

// readState reads the JSON value slot keeps; none is null. A failing
// Host ends the pass (p.hostErr), so its event comes again.
func (p *pipe) readState(ctx context.Context, slot stateSlot) (any, error) {
	var b []byte
	var err error
	where, fix := slot.file, "remove the file"
	if slot.shared {
		where = fmt.Sprintf("in the gateway's store (scope %s, key %s)", slot.scope, slot.name)
		fix = "store a new value under the key with state.set"
		b, err = p.r.host.StoredValue(ctx, slot.scope, slot.name)
		if errors.Is(err, sdk.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			p.hostErr = err
			return nil, errStageWaits
		}
	} else {
		b, err = os.ReadFile(slot.file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read stored state %s: %w", slot.file, err)
		}
	}
	v, err := flows.DecodeJSON(b)
	if err != nil {
		return nil, fmt.Errorf("stored state %s is not JSON (%v); %s to start over", where, err, fix)
	}
	return v, nil
}

// writeState replaces the value slot keeps with b (slot.encode): in its
// file atomically (see writeAtomic; the file is 0600 and its directory
// 0700), or in the gateway's store. A failing Host ends the pass
// (p.hostErr); the stage's output is recorded, so the value stays
// unwritten, as if the gateway had died here (see pipe.store).
func (p *pipe) writeState(ctx context.Context, slot stateSlot, b []byte) error {
	if slot.shared {
		if err := p.r.host.StoreValue(ctx, slot.scope, slot.name, b); err != nil {
			p.hostErr = err
			return errStageWaits
		}
		return nil
	}
	if err := writeAtomic(slot.file, b); err != nil {
		return fmt.Errorf("store state in %s: %w", slot.file, err)
	}
	return nil
}
