package sdktest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
)

// StoreValue implements sdk.Host by the gateway's rules: a value over
// sdk.MaxKeptValue, and a scope or key that is empty or over
// sdk.MaxStoredName bytes, is refused with sdk.ErrInvalid and nothing
// stored; otherwise value replaces what (scope, key) held. Stored values
// belong to no flow.
func (h *Host) StoreValue(ctx context.Context, scope, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storedName(scope, key); err != nil {
		return err
	}
	if len(value) > sdk.MaxKeptValue {
		return invalid("the value stored under %q in %q is %d bytes, over the %d one record holds; store a smaller value", key, scope, len(value), sdk.MaxKeptValue)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stored == nil {
		h.stored = map[[2]string][]byte{}
	}
	h.stored[[2]string{scope, key}] = bytes.Clone(value)
	return nil
}

// StoredValue implements sdk.Host: the value stored under (scope, key),
// or sdk.ErrNotFound.
func (h *Host) StoredValue(ctx context.Context, scope, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := storedName(scope, key); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.stored[[2]string{scope, key}]
	if !ok {
		return nil, fmt.Errorf("%w: no value is stored under %q in %q", sdk.ErrNotFound, key, scope)
	}
	return bytes.Clone(b), nil
}

// storedName refuses a scope or key the gateway does not store under.
func storedName(scope, key string) error {
	for _, p := range []struct{ what, v string }{{"scope", scope}, {"key", key}} {
		if p.v == "" || len(p.v) > sdk.MaxStoredName {
			return invalid("a stored value's %s is %d bytes; give one of 1 to %d bytes", p.what, len(p.v), sdk.MaxStoredName)
		}
	}
	return nil
}
