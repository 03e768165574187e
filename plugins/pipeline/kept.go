package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// How much of what the controller writes stays inline in a flow's state
// when it has a data directory (see files). A step result whose encoding
// is over sdk.InlineStdout, and every result once maxInlineResults bytes
// of them are inline (in key order), is kept in a file and the state
// holds {"spilled": "<sha256>"} in its place; so is an output over
// sdk.InlineStdout ("output_file") and a continuation's prior outputs
// over maxInlinePrior ("prior_output_file").
const (
	maxInlineResults = 128 << 10
	maxInlinePrior   = 64 << 10
)

// State keys of the values kept in files.
const (
	outputFileKey = "output_file"
	priorFileKey  = "prior_output_file"
)

// spilled is the state's entry for a step result kept in a file.
type spilled struct {
	Spilled string `json:"spilled"`
}

// readKept decodes the state's results and prior outputs, reading back
// those kept in files, and reads back the stdout of results whose output
// is in their task's log file.
func (s *state) readKept() error {
	var entries map[string]json.RawMessage
	if v, ok := s.raw["results"]; ok {
		if err := json.Unmarshal(v, &entries); err != nil {
			return fmt.Errorf("the flow's state field %q is damaged: %w", "results", err)
		}
	}
	s.Results = make(map[string]flows.StepResult, len(entries))
	for k, v := range entries {
		var ref spilled
		if json.Unmarshal(v, &ref) == nil && ref.Spilled != "" {
			b, err := s.files.get(ref.Spilled)
			if err != nil {
				return fmt.Errorf("the result of step %s: %w", k, err)
			}
			v = b
		}
		var r flows.StepResult
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("the flow's state holds a damaged result for step %s: %w", k, err)
		}
		if r.StdoutFile != "" {
			if err := loadStdout(&r); err != nil {
				return err
			}
		}
		s.Results[k] = r
	}
	if v, ok := s.raw[priorFileKey]; ok {
		var sum string
		if err := json.Unmarshal(v, &sum); err != nil {
			return fmt.Errorf("the flow's state field %q is damaged: %w", priorFileKey, err)
		}
		b, err := s.files.get(sum)
		if err == nil {
			err = json.Unmarshal(b, &s.Prior)
		}
		if err != nil {
			return fmt.Errorf("the prior outputs of the continuation: %w", err)
		}
	}
	return nil
}

// encodeResults encodes the step results for the state, keeping in files
// those that do not stay inline.
func (s *state) encodeResults() (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	inline := 0
	for i, k := range slices.Sorted(maps.Keys(s.Results)) {
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(s.Results[k])
		if err != nil {
			return nil, err
		}
		if s.files.ok() && (len(v) > sdk.InlineStdout || inline+len(key)+len(v) > maxInlineResults) {
			sum, err := s.files.put(v)
			if err != nil {
				return nil, fmt.Errorf("the result of step %s: %w", k, err)
			}
			v, _ = json.Marshal(spilled{sum})
		} else {
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

// keep writes v under key, or, when its encoding is over limit and there
// is a data directory, keeps it in a file and writes ref(its digest)
// under fileKey instead.
func (s *state) keep(key, fileKey string, v any, limit int, ref func(sum string) any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if !s.files.ok() || len(b) <= limit {
		s.raw[key] = b
		delete(s.raw, fileKey)
		return nil
	}
	sum, err := s.files.put(b)
	if err != nil {
		return fmt.Errorf("the state field %q: %w", key, err)
	}
	delete(s.raw, key)
	s.raw[fileKey], err = json.Marshal(ref(sum))
	return err
}

// keepOutput writes the workflow's output, kept in a file when it is over
// sdk.InlineStdout: "output_file" then names it (flows.OutputFile), and
// readers of the output follow it (flows.StateOutput).
func (s *state) keepOutput(output []any) error {
	return s.keep("output", outputFileKey, output, sdk.InlineStdout, func(sum string) any {
		return flows.OutputFile{Path: s.files.path(s.files.flow, sum), SHA256: sum}
	})
}
