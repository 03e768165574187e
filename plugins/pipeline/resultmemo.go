package pipeline

import (
	"bytes"
	"encoding/json"

	"github.com/flowgate/flowgate/flows"
)

// resultMemo keeps, for the flows the controller passed over last, each
// step result the pass decoded from the flow's state, with the bytes it
// was decoded from, by flow id and state key. A flow's state holds the
// result of every step that ran, and each pass decoded all of them again
// although, from one step to the next, only the last step's had changed:
// a pass now decodes only the entries whose bytes differ from those the
// memo holds, whoever wrote them (this controller, a person's `tasks flow
// update`, the controller of another gateway on a shared store). An
// entry is matched by its bytes, so a hit is what decoding them would
// give.
type resultMemo struct {
	memo[string, map[string]decodedResult]
}

// decodedResult is one entry of a flow's results and what it decodes to.
// Neither changes once in the memo: a pass takes a copy (fresh).
type decodedResult struct {
	b   json.RawMessage
	res flows.StepResult
}

// of returns the results the last pass over flow id decoded (nil for
// none), for readState; the map is the memo's: do not change it.
func (m *resultMemo) of(id string) map[string]decodedResult {
	if m == nil {
		return nil
	}
	d, _ := m.get(id)
	return d
}

// keep keeps d, what a pass over flow id decoded, in place of what the
// memo held for the flow.
func (m *resultMemo) keep(id string, d map[string]decodedResult) {
	if m != nil {
		m.put(id, d)
	}
}

// decodeEntry decodes the result of step key, entry v of the state's
// results, or takes it from was, the flow's entries the last pass
// decoded, when the bytes there are v's; it records what it returns in
// now, for the next pass.
func decodeEntry(key string, v json.RawMessage, was, now map[string]decodedResult) (flows.StepResult, error) {
	if d, ok := was[key]; ok && bytes.Equal(d.b, v) {
		now[key] = d
		return d.fresh(), nil
	}
	r, err := decodeResult(key, v)
	if err != nil {
		return r, err
	}
	d := decodedResult{b: v, res: r}
	now[key] = d
	return d.fresh(), nil
}

// fresh is d's result for one pass: its pointers and the values decoded
// from its JSON, subject and response are copied, so that nothing a pass does to them
// (the stages copy a value before changing it) reaches the next pass.
func (d decodedResult) fresh() flows.StepResult {
	r := d.res
	if r.Stdout != nil {
		out := *r.Stdout
		r.Stdout = &out
	}
	if r.Approved != nil {
		ok := *r.Approved
		r.Approved = &ok
	}
	r.JSON, r.Subject, r.Response = copyJSON(r.JSON), copyJSON(r.Subject), copyJSON(r.Response)
	return r
}

// copyJSON is a deep copy of v, a value flows.DecodeJSON returns: its
// objects and arrays are new, its scalars (immutable) the same.
func copyJSON(v any) any {
	switch t := v.(type) {
	case *flows.Object:
		o := flows.NewObject(t.Len())
		for _, k := range t.Keys() {
			e, _ := t.Get(k)
			o.Set(k, copyJSON(e))
		}
		return o
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyJSON(e)
		}
		return out
	}
	return v
}
