package engine

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// A managed flow's record is mostly its controller's state (4 KB and up
// for a pipeline). encoding/json's scanner, which calls a function per
// byte, went over that state twice on every read of the record (once to
// validate the whole record, once to find the end of the state, a
// json.RawMessage) and once more on every write (it compacts and
// HTML-escapes every RawMessage it encodes). The flow codec checks the
// state once with rawScan, a plain loop several times faster, and leaves
// the rest of the record to encoding/json, so the bytes stored and the
// flow read are exactly encoding/json's: tests hold both to json.Marshal
// and json.Unmarshal, over fixed cases and fuzzed bytes.

// stateMember is the JSON name of sdk.Flow.State.
const stateMember = "state"

// statePlaceholder stands in for a flow's state while encodeFlow has
// encoding/json write the rest of the record; stateMark is how it reads
// in the output. Every field sdk.Flow has before State is a string (a
// test checks), and a string's quotes are escaped inside a string, so
// the mark's first occurrence is the state's member.
var (
	statePlaceholder = json.RawMessage("0")
	stateMark        = []byte(`,"` + stateMember + `":0`)
)

// encodeFlow returns json.Marshal(storedFlow{Flow: f}), the bytes of
// f's record. A state that is valid JSON json.Marshal would not change
// (compact, nothing to HTML-escape: what every record written by
// json.Marshal holds) is spliced in as it is; any other is left to
// json.Marshal, which compacts it, escapes it or refuses it.
func encodeFlow(f *sdk.Flow) ([]byte, error) {
	if _, plain := rawValid(f.State); len(f.State) == 0 || !plain {
		return json.Marshal(storedFlow{Flow: f})
	}
	c := *f
	c.State = statePlaceholder
	b, err := json.Marshal(storedFlow{Flow: &c})
	if err != nil {
		return nil, err
	}
	i := bytes.Index(b, stateMark)
	if i < 0 {
		return json.Marshal(storedFlow{Flow: f})
	}
	i += len(stateMark) - len(statePlaceholder)
	out := make([]byte, 0, len(b)-len(statePlaceholder)+len(f.State))
	out = append(out, b[:i]...)
	out = append(out, f.State...)
	return append(out, b[i+len(statePlaceholder):]...), nil
}

// unmarshalFlow decodes the flow record b into v, a *sdk.Flow or a
// *flowHead, as json.Unmarshal(b, v) does and with its errors. The state
// is cut out of the record while rawScan checks the whole of it; the
// rest goes to encoding/json, and a *sdk.Flow gets a copy of the state's
// bytes, as json.RawMessage's UnmarshalJSON keeps them. A record the cut
// cannot be sure of (invalid, an unusual key, nesting deeper than
// rawMaxDepth) is decoded by json.Unmarshal alone.
func unmarshalFlow(b []byte, v any) error {
	rest, state, ok := cutMember(b, stateMember)
	if !ok {
		return json.Unmarshal(b, v)
	}
	if err := json.Unmarshal(rest, v); err != nil {
		return json.Unmarshal(b, v)
	}
	if f, isFlow := v.(*sdk.Flow); isFlow && state != nil {
		f.State = bytes.Clone(state)
	}
	return nil
}

// cutMember returns the JSON object b without its member name, and that
// member's value (nil when b has none). ok is false, and b is better
// left to encoding/json, unless b is a valid object every top-level key
// of which is plain ASCII without escapes and at most one of which
// encoding/json would match to name: it matches keys case-insensitively
// and keeps the last of repeated ones.
func cutMember(b []byte, name string) (rest, value []byte, ok bool) {
	s := rawScan{b: b}
	if s.ws(); s.i >= len(b) || b[s.i] != '{' {
		return nil, nil, false
	}
	var cut rawMember
	found, before, after := false, -1, -1
	prevEnd := -1
	valid := s.object(func(m rawMember) bool {
		key := m.key[1 : len(m.key)-1]
		if !plainKey(key) {
			return false
		}
		switch {
		case string(key) == name:
			if found {
				return false
			}
			found, cut, before = true, m, prevEnd
		case strings.EqualFold(string(key), name):
			return false
		case found && after < 0:
			after = m.start
		}
		prevEnd = m.end
		return true
	}) && s.end()
	switch {
	case !valid:
		return nil, nil, false
	case !found:
		return b, nil, true
	}
	// Cut the member with the comma that joins it to its neighbour: the
	// one before it, else the one after it.
	from, to := cut.start, cut.end
	switch {
	case before >= 0:
		from = before
	case after >= 0:
		to = after
	}
	rest = make([]byte, 0, len(b)-(to-from))
	rest = append(append(rest, b[:from]...), b[to:]...)
	return rest, b[cut.value:cut.end], true
}

// plainKey reports whether an object key's bytes, between its quotes,
// are ASCII without escapes, so that they are the name encoding/json
// reads and fold to another name only by ASCII case.
func plainKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}
