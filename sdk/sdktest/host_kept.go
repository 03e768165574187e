package sdktest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
)

// KeepValue implements sdk.Host by the gateway's rules: the flow must
// exist, a value over sdk.MaxKeptValue is refused with sdk.ErrInvalid and
// nothing kept, and a value is named by the SHA-256 of its bytes, so
// keeping it again changes nothing.
func (h *Host) KeepValue(ctx context.Context, flowID string, value []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if len(value) > sdk.MaxKeptValue {
		return "", invalid("a kept value of flow %s is %d bytes, over the %d a flow can keep in one record; keep smaller values, or write large data to a file and keep its path", flowID, len(value), sdk.MaxKeptValue)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.loadFlow(flowID); err != nil {
		return "", err
	}
	sum := sha256Hex(value)
	if h.kept == nil {
		h.kept = map[string]map[string][]byte{}
	}
	if h.kept[flowID] == nil {
		h.kept[flowID] = map[string][]byte{}
	}
	h.kept[flowID][sum] = bytes.Clone(value)
	return sum, nil
}

// KeptValue implements sdk.Host: the value flow flowID keeps under sum,
// or sdk.ErrNotFound; a sum that is not a SHA-256 in lowercase hex is
// sdk.ErrInvalid, as on the gateway.
func (h *Host) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d, err := hex.DecodeString(sum); err != nil || len(d) != sha256.Size || hex.EncodeToString(d) != sum {
		return nil, invalid("%q is not the digest of a kept value (64 lowercase hex digits of a SHA-256)", sum)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.kept[flowID][sum]
	if !ok {
		return nil, fmt.Errorf("%w: flow %s keeps no value %s; it was never kept, or the flow was pruned", sdk.ErrNotFound, flowID, sum)
	}
	return bytes.Clone(b), nil
}

// sha256Hex is the SHA-256 of b in lowercase hex, a kept value's name.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
