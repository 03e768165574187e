package engine

import (
	"fmt"
	"net/url"

	"github.com/flowgate/flowgate/sdk"
)

// storedPrefix holds the values controllers store outside any flow
// (Engine.StoreValue): "stored/<controller>/<scope>/<key>", each part
// path-escaped, each value whole in one record. No flow's prune deletes
// them.
const storedPrefix = "stored/"

// MaxStoredName bounds a stored value's scope and key, in bytes
// (sdk.MaxStoredName).
const MaxStoredName = sdk.MaxStoredName

// storedKey is the record of (controller, scope, key), or sdk.ErrInvalid
// for a scope or key that is empty or over MaxStoredName.
func storedKey(controller, scope, key string) (string, error) {
	for _, p := range []struct{ what, v string }{{"scope", scope}, {"key", key}} {
		if p.v == "" || len(p.v) > MaxStoredName {
			return "", fmt.Errorf("%w: a stored value's %s is %d bytes; give one of 1 to %d bytes", sdk.ErrInvalid, p.what, len(p.v), MaxStoredName)
		}
	}
	return storedPrefix + url.PathEscape(controller) + "/" + url.PathEscape(scope) + "/" + url.PathEscape(key), nil
}

// StoreValue stores b as controller's value under (scope, key), replacing
// what was there: one value per controller, scope and key, which every
// gateway of a shared store reads and writes, and which outlives the
// flows that wrote it (the pipeline controller keeps state.set and
// diff.last values so). A value over MaxKept, and a scope or key that is
// empty or over MaxStoredName bytes, is refused with sdk.ErrInvalid
// before anything is written.
func (e *Engine) StoreValue(controller, scope, key string, b []byte) error {
	if len(b) > MaxKept {
		return fmt.Errorf("%w: the value stored under %q in %q is %d bytes, over the %d one record holds; store a smaller value", sdk.ErrInvalid, key, scope, len(b), MaxKept)
	}
	k, err := storedKey(controller, scope, key)
	if err != nil {
		return err
	}
	return e.write(func(t *txn) error { return t.putRaw(k, b) })
}

// StoredValue returns controller's value under (scope, key) (see
// StoreValue), or sdk.ErrNotFound when none was stored.
func (e *Engine) StoredValue(controller, scope, key string) ([]byte, error) {
	k, err := storedKey(controller, scope, key)
	if err != nil {
		return nil, err
	}
	return e.readRaw(k, func() error {
		return fmt.Errorf("%w: no value is stored under %q in %q", sdk.ErrNotFound, key, scope)
	})
}
