package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/flows"
)

// keptValue is a result read back from its file in the data directory:
// the file's bytes and their digest, so that a result encoded to the same
// bytes is kept again under that digest without hashing it.
type keptValue struct {
	b   []byte
	sum string
}

// setResult records res as the result under state key key, replacing
// whatever stood there, read or not.
func (s *state) setResult(key string, res flows.StepResult) {
	s.Results[key] = res
	delete(s.unread, key)
}

// load reads back the unread result under state key key, if there is
// one: from its file in the data directory (checked against its digest),
// or its stdout from its task's log file, or, when that is not on this
// machine, from its task's record.
func (s *state) load(key string) (flows.StepResult, error) {
	v, ok := s.unread[key]
	if !ok {
		return s.Results[key], nil
	}
	var kept keptValue
	if kept.sum = spilledSum(v); kept.sum != "" {
		b, err := s.files.get(kept.sum)
		if err != nil {
			return flows.StepResult{}, fmt.Errorf("the result of step %s: %w", key, err)
		}
		v, kept.b = b, b
	}
	r, err := decodeResult(key, v)
	if err == nil && r.StdoutFile != "" {
		err = loadStdout(&r, s.outputs)
	}
	if err != nil {
		return flows.StepResult{}, err
	}
	s.setResult(key, r)
	if kept.b != nil {
		s.read[key] = kept
	}
	return r, nil
}

// loadAll reads back every unread result.
func (s *state) loadAll() error {
	for key := range s.unread {
		if _, err := s.load(key); err != nil {
			return err
		}
	}
	return nil
}

// need reads the unread results of frame fr that text refers to, by a
// $id. ref or a LOBSTER_STEP_<ID>_ variable (the refs a step can make),
// or all of them when all is set. It errs on the side of reading: a
// mention anywhere in text counts.
func (r *run) need(fr *frame, all bool, text ...string) error {
	joined := strings.Join(text, "\n")
	for key := range r.st.unread {
		id, ok := strings.CutPrefix(key, fr.prefix)
		if !ok || !all && !strings.Contains(joined, "$"+id+".") && !strings.Contains(joined, flows.RefEnvName(id, "")) {
			continue
		}
		res, err := r.st.load(key)
		if err != nil {
			return err
		}
		fr.results[id] = res
	}
	return nil
}

// needFor reads what step s of frame fr may refer to (see need): refs in
// the step itself, and in what its commands are templated with (the
// frame's args and env, the workflow's env), whose values can hold refs
// too. For a step that has run and is a parallel or workflow step or an
// approval gate, the pass reads its own result as well.
func (r *run) needFor(fr *frame, s *flows.Step, done bool) error {
	if len(r.st.unread) == 0 {
		return nil // nothing left to read: skip encoding the step
	}
	if done && s.Kind() != "parallel" && s.Kind() != "workflow" && s.Approval == nil {
		return nil
	}
	var text []string
	for _, v := range []any{s, fr.args, fr.env, fr.wf.Env} {
		b, err := json.Marshal(v)
		if err != nil {
			return r.need(fr, true)
		}
		text = append(text, string(b))
	}
	if done {
		text = append(text, "$"+s.ID+".")
		if s.Parallel != nil {
			for _, b := range s.Parallel.Branches {
				text = append(text, "$"+b.ID+".") // rederive combines them
			}
		}
	}
	return r.need(fr, false, text...)
}
