package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// How much of what the controller writes stays inline in a flow's state
// when it has a data directory (see files). A step result whose encoding
// is over sdk.InlineStdout, and every result once maxInlineResults bytes
// of them are inline (in key order), is kept in a file and the state
// holds {"spilled": "<sha256>"} in its place; so is a continuation's
// prior outputs over maxInlinePrior ("prior_output_file"). A state
// stage's output over sdk.InlineStdout is kept as a result is, and the
// object of them, once over maxInlineStageOut, in one file
// ("stage_outputs_file"). The workflow's output is the flow's, not the
// state's (state.produced).
const (
	maxInlineResults  = 128 << 10
	maxInlinePrior    = 64 << 10
	maxInlineStageOut = 32 << 10
)

// State keys of the state stages' outputs, and of the values kept in
// files.
const (
	stageOutKey     = "stage_outputs"
	priorFileKey    = "prior_output_file"
	stageOutFileKey = "stage_outputs_file"
)

// spilled is the state's entry for a step result or stage output kept in
// a file.
type spilled struct {
	Spilled string `json:"spilled"`
}

// readKept decodes the state's results, stage outputs and prior
// outputs, reading back the stage and prior outputs kept in files. A
// result whose value is kept in a file (a spilled entry, or a stdout in
// its task's log file) is left unread: it is read when a step needs it
// (see state.need), so a pass does not read and hash every kept result.
func (s *state) readKept() error {
	entries, err := s.rawEntries("results", "")
	if err != nil {
		return err
	}
	s.Results = make(map[string]flows.StepResult, len(entries))
	s.unread, s.read = map[string]json.RawMessage{}, map[string]keptValue{}
	s.decoded = make(map[string]decodedResult, len(entries))
	for k, v := range entries {
		if spilledSum(v) != "" {
			s.unread[k] = v
			s.Results[k] = flows.StepResult{ID: k} // a stand-in until need reads it
			continue
		}
		r, err := decodeEntry(k, v, s.was, s.decoded)
		if err != nil {
			return err
		}
		if r.StdoutFile != "" {
			s.unread[k] = v
		}
		s.Results[k] = r
	}
	if entries, err = s.readEntries(stageOutKey, stageOutFileKey, "the output of stage %s"); err != nil {
		return err
	}
	if len(entries) > 0 {
		s.StageOut = make(map[string][]any, len(entries))
	}
	for k, v := range entries {
		decoded, err := flows.DecodeJSON(v)
		items, ok := decoded.([]any)
		if err == nil && !ok {
			err = errors.New("not an array")
		}
		if err != nil {
			return fmt.Errorf("the flow's state holds a damaged output for stage %s: %w", k, err)
		}
		s.StageOut[k] = items
	}
	if v, ok := s.raw[priorFileKey]; ok {
		b, err := s.readFile(priorFileKey, v)
		if err == nil {
			err = json.Unmarshal(b, &s.Prior)
		}
		if err != nil {
			return fmt.Errorf("the prior outputs of the continuation: %w", err)
		}
	}
	return nil
}

// decodeResult decodes the result of step key as the state holds it.
func decodeResult(key string, v json.RawMessage) (flows.StepResult, error) {
	var r flows.StepResult
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("the flow's state holds a damaged result for step %s: %w", key, err)
	}
	return r, nil
}

// spilledSum returns the digest an entry kept in a file names
// ({"spilled": "<sha256>"}), or "" for an entry kept inline.
func spilledSum(v json.RawMessage) string {
	var ref spilled
	if !bytes.HasPrefix(bytes.TrimSpace(v), []byte(`{"spilled"`)) || json.Unmarshal(v, &ref) != nil {
		return ""
	}
	return ref.Spilled
}

// readFile reads back the value kept in a file whose digest v is the
// state's field key holds.
func (s *state) readFile(key string, v json.RawMessage) ([]byte, error) {
	var sum string
	if err := json.Unmarshal(v, &sum); err != nil {
		return nil, fmt.Errorf("the flow's state field %q is damaged: %w", key, err)
	}
	return s.files.get(sum)
}

// readEntries decodes the object of entries under key (see rawEntries)
// and reads back each entry kept in a file ({"spilled": "<sha256>"}).
// what names an entry in errors, with %s for its key.
func (s *state) readEntries(key, fileKey, what string) (map[string]json.RawMessage, error) {
	entries, err := s.rawEntries(key, fileKey)
	if err != nil {
		return nil, err
	}
	for k, v := range entries {
		if sum := spilledSum(v); sum != "" {
			b, err := s.files.get(sum)
			if err != nil {
				return nil, fmt.Errorf(what+": %w", k, err)
			}
			entries[k] = b
		}
	}
	return entries, nil
}

// rawEntries decodes the object of entries under key, or, when the state
// has fileKey instead, the object kept in that file, leaving the entries
// as the object holds them.
func (s *state) rawEntries(key, fileKey string) (map[string]json.RawMessage, error) {
	v, ok := s.raw[key]
	if f, kept := s.raw[fileKey]; fileKey != "" && kept {
		b, err := s.readFile(fileKey, f)
		if err != nil {
			return nil, fmt.Errorf("the state field %q: %w", key, err)
		}
		v, ok = b, true
	}
	var entries map[string]json.RawMessage
	if ok {
		if err := json.Unmarshal(v, &entries); err != nil {
			return nil, fmt.Errorf("the flow's state field %q is damaged: %w", key, err)
		}
	}
	return entries, nil
}

// encodeEntries encodes m as a JSON object for the state, keeping in a
// file each entry whose encoding is over sdk.InlineStdout, and every
// entry once inlineMax bytes of them are inline (in key order). An entry
// of unread is written as it is, and one of read whose encoding is still
// the bytes read back is kept under the digest it had, without hashing it
// again. what names an entry in errors, with %s for its key.
func encodeEntries[V any](s *state, m map[string]V, unread map[string]json.RawMessage, read map[string]keptValue, inlineMax int, what string) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	inline := 0
	for i, k := range slices.Sorted(maps.Keys(m)) {
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		v, ok := unread[k]
		if !ok {
			if v, err = json.Marshal(m[k]); err != nil {
				return nil, err
			}
		}
		switch {
		case ok && spilledSum(v) != "":
		case s.files.ok() && (len(v) > sdk.InlineStdout || inline+len(key)+len(v) > inlineMax):
			sum := read[k].sum
			if !bytes.Equal(read[k].b, v) {
				if sum, err = s.files.put(v); err != nil {
					return nil, fmt.Errorf(what+": %w", k, err)
				}
			}
			v, _ = json.Marshal(spilled{sum})
		default:
			inline += len(key) + len(v)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// keepStageOutputs writes the outputs of the state stages: each output
// over sdk.InlineStdout in a file of its own, and the object of them,
// once it is over maxInlineStageOut (a loop that runs many state stages),
// in one file too, which "stage_outputs_file" then names.
func (s *state) keepStageOutputs() error {
	entries, err := encodeEntries(s, s.StageOut, nil, nil, math.MaxInt, "the output of stage %s")
	if err != nil {
		return err
	}
	return s.keep(stageOutKey, stageOutFileKey, entries, maxInlineStageOut, func(sum string) any { return sum })
}

// keep writes v under key, or, when its encoding is over limit and there
// is a data directory, keeps it in a file and writes ref(its digest)
// under fileKey instead.
func (s *state) keep(key, fileKey string, v any, limit int, ref func(sum string) any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.keepIn(s.files, key, fileKey, b, limit, ref)
}

// keepIn is keep of the encoded value b, keeping it in fs.
func (s *state) keepIn(fs files, key, fileKey string, b []byte, limit int, ref func(sum string) any) error {
	if !fs.ok() || len(b) <= limit {
		s.raw[key] = b
		delete(s.raw, fileKey)
		return nil
	}
	sum, err := fs.put(b)
	if err != nil {
		return fmt.Errorf("the state field %q: %w", key, err)
	}
	delete(s.raw, key)
	s.raw[fileKey], err = json.Marshal(ref(sum))
	return err
}

// produced returns the flow's output as its record keeps it
// (sdk.Output, the same bytes as the Lobster envelope's output): the
// workflow's output, and what the renderer of a pipeline string printed
// (text, nil for none). Each is held in the record up to
// sdk.InlineStdout, else kept: on a shared store in the store, where
// every gateway reads it, unless it is over sdk.MaxKeptValue; such a
// value, like every kept value on bbolt, is a file of the data
// directory, read by its path. Without a data directory both stay in the
// record, and together with the state they may take at most maxState.
func (s *state) produced(output []any, text *string, state json.RawMessage) (*sdk.Output, error) {
	o := &sdk.Output{}
	var err error
	b := []byte(flows.Stringify(output))
	if o.File, err = s.keepProduced(b); err != nil {
		return nil, fmt.Errorf("keep the workflow's output: %w", err)
	}
	if o.File == nil {
		o.Value = b
	}
	if text != nil {
		tb := []byte(flows.Stringify(*text))
		if o.TextFile, err = s.keepProduced(tb); err != nil {
			return nil, fmt.Errorf("keep what the pipeline rendered: %w", err)
		}
		if o.TextFile == nil {
			o.Text = *text
		}
	}
	if size := len(state) + len(o.Value) + len(o.Text); size > maxState {
		return nil, fmt.Errorf("%w: the state and the workflow's output take %d bytes, over the %d a flow's record may hold of them (the output is %d bytes); have the last step print a small result, or write large ones to files and print their paths", errStateTooLarge, size, maxState, len(o.Value)+len(o.Text))
	}
	return o, nil
}

// keepProduced keeps b, a value the flow produced, outside the flow's
// record when it is over sdk.InlineStdout and there is somewhere to keep
// it, and names where; nil means the record holds it.
func (s *state) keepProduced(b []byte) (*sdk.OutputFile, error) {
	fs := s.files
	if len(b) > sdk.MaxKeptValue {
		fs = fs.local()
	}
	if !fs.ok() || len(b) <= sdk.InlineStdout {
		return nil, nil
	}
	sum, err := fs.put(b)
	if err != nil {
		return nil, err
	}
	if fs.store != nil {
		return &sdk.OutputFile{SHA256: sum, Kept: true}, nil
	}
	return &sdk.OutputFile{Path: fs.path(fs.flow, sum), SHA256: sum}, nil
}
