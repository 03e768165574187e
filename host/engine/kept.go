package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// keptPrefix holds the values controllers keep for their flows
// (Engine.Keep): "kept/<flow id>/<sha256>", each value whole in one
// record. They are deleted with their flow.
const keptPrefix = "kept/"

// MaxKept bounds one kept value (sdk.MaxKeptValue): one record (at most
// store.MaxValueSize), which an etcd transaction (1.5 MiB a request)
// carries whole beside the flow it guards.
const MaxKept = sdk.MaxKeptValue

func keptKey(flowID, sum string) string { return keptPrefix + flowID + "/" + sum }

// Keep stores b as a value flow flowID keeps, named by the SHA-256 of its
// bytes, and returns that digest (lowercase hex). Keeping the same bytes
// again writes nothing. It is how a controller keeps what is too large
// for a flow's state where every gateway of a shared store reads it: the
// state names the digest, and Kept reads it back. The flow must exist;
// its values are deleted when it is pruned.
//
// A value over MaxKept is refused with sdk.ErrInvalid before anything is
// written, and an unknown flow with sdk.ErrNotFound.
func (e *Engine) Keep(flowID string, b []byte) (string, error) {
	if len(b) > MaxKept {
		return "", fmt.Errorf("%w: a kept value of flow %s is %d bytes, over the %d a flow can keep in one record; keep smaller values, or write large data to a file and keep its path", sdk.ErrInvalid, flowID, len(b), MaxKept)
	}
	s := sha256.Sum256(b)
	sum := hex.EncodeToString(s[:])
	err := e.write(func(t *txn) error {
		if _, err := loadFlow(t.tx, flowID); err != nil {
			return err
		}
		if _, err := t.tx.Get(keptKey(flowID, sum)); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
		return t.putRaw(keptKey(flowID, sum), b)
	})
	if err != nil {
		return "", err
	}
	return sum, nil
}

// Kept returns the value flow flowID keeps under digest sum (see Keep),
// checked against it. A value the flow does not keep (it was never kept,
// or the flow was pruned) is sdk.ErrNotFound; a sum that is not a
// SHA-256 in lowercase hex is sdk.ErrInvalid.
func (e *Engine) Kept(flowID, sum string) ([]byte, error) {
	if d, err := hex.DecodeString(sum); err != nil || len(d) != sha256.Size || hex.EncodeToString(d) != sum {
		return nil, fmt.Errorf("%w: %q is not the digest of a kept value (64 lowercase hex digits of a SHA-256)", sdk.ErrInvalid, sum)
	}
	b, err := e.readRaw(keptKey(flowID, sum), func() error {
		return fmt.Errorf("%w: flow %s keeps no value %s; it was never kept, or the flow was pruned", sdk.ErrNotFound, flowID, sum)
	})
	if err != nil {
		return nil, err
	}
	if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != sum {
		return nil, fmt.Errorf("the kept value %s of flow %s does not match its digest: the store's record is damaged; run the flow again", sum, flowID)
	}
	return b, nil
}

// A kept value must fit in one record.
var _ [store.MaxValueSize - MaxKept]struct{}

// readRaw returns a copy of the value at key, or missing's error when
// there is none.
func (e *Engine) readRaw(key string, missing func() error) ([]byte, error) {
	var b []byte
	err := e.view(func(tx store.ReadTx) error {
		it, err := tx.Get(key)
		if errors.Is(err, store.ErrKeyNotFound) {
			return missing()
		}
		if err != nil {
			return err
		}
		b = bytes.Clone(it.Value)
		return nil
	})
	return b, err
}
