package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// state is a pipeline flow's state. raw keeps every top-level key as it
// was read, so keys the controller does not own (file, args, cwd, and
// the decisions an older gateway recorded at gates) are written back
// untouched.
type state struct {
	raw map[string]json.RawMessage
	// asRead is raw as it was read, before the pass changed it (see
	// changed).
	asRead map[string]json.RawMessage
	// files keeps the values too large to keep inline.
	files files
	// decoded are the entries of the results this pass decoded, or
	// found decoded in the memo, for the next pass (see resultMemo);
	// was are those of the last pass.
	decoded, was map[string]decodedResult
	// outputs finds a step's stdout in its task's record when its log
	// file is not on this machine; nil reads the log files only.
	outputs *taskOutputs
	File    string
	// Pipeline is the pipeline string a flow runs instead of a file.
	Pipeline string
	Args     map[string]any
	Cwd      string
	Env      map[string]string
	// GateTimeoutMs is flows.Invocation.GateTimeoutMs: how long a gate
	// may wait unanswered; zero is for ever.
	GateTimeoutMs int64
	// Session and SessionCheck are flows.Invocation's: the lineage the
	// command steps belong to (empty for none) and its session check.
	Session, SessionCheck string
	// GateUntil is the deadline of each gate parked with a timeout, by
	// step ("gate_until"), so that parking again keeps it.
	GateUntil map[string]time.Time
	// Results holds every step's result by state key. Those in unread
	// are stand-ins until need reads them.
	Results map[string]flows.StepResult
	// unread holds the entries, as the state holds them, of the results
	// whose values are kept in files and were not read yet (see need);
	// read holds the bytes and digest of each result read back from a
	// file of the data directory.
	unread map[string]json.RawMessage
	read   map[string]keptValue
	// Decisions are the gate answers a gateway of before Flow.Decisions
	// recorded in the state (legacyDecisionsKey); run.decision reads the
	// flow's own first.
	Decisions map[string]sdk.Decision
	// Prior is, in a continuation, the stdout each rerun step printed in
	// the source run ("prior_output").
	Prior map[string]string
	// StageOut is the output of each state stage that ran, by
	// "<stage id>:<iteration>" ("stage_outputs"): later passes reuse it.
	StageOut map[string][]any
	// Stages is how far each pipeline got, by pipeline id, kept under
	// sdk.StagesKey, the published view flow show reads.
	Stages map[string]sdk.StageReport
}

// legacyDecisionsKey is where gateways of before Flow.Decisions recorded
// gate answers in the state (the deprecated sdk.DecisionsKey).
const legacyDecisionsKey = "decisions"

// readState decodes a flow's state, reading back the values fs keeps; it
// fails when the state names no workflow file. was are the results the
// last pass over the flow decoded (nil for none): an entry whose bytes
// are unchanged is not decoded again.
func readState(b json.RawMessage, fs files, was map[string]decodedResult) (*state, error) {
	s := &state{raw: map[string]json.RawMessage{}, files: fs, was: was}
	if len(bytes.TrimSpace(b)) > 0 && string(bytes.TrimSpace(b)) != "null" {
		if err := json.Unmarshal(b, &s.raw); err != nil {
			return nil, fmt.Errorf("the flow's state is not a JSON object: %w", err)
		}
	}
	for key, dst := range map[string]any{"file": &s.File, "pipeline": &s.Pipeline, "cwd": &s.Cwd, "env": &s.Env, "gate_timeout_ms": &s.GateTimeoutMs, "session": &s.Session, "session_check": &s.SessionCheck, "gate_until": &s.GateUntil, legacyDecisionsKey: &s.Decisions, priorKey: &s.Prior, sdk.StagesKey: &s.Stages} {
		if v, ok := s.raw[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return nil, fmt.Errorf("the flow's state field %q is damaged: %w", key, err)
			}
		}
	}
	var err error
	if v, ok := s.raw["args"]; ok && string(v) != "null" {
		// Read as args JSON, so that objects in the args keep their
		// keys' order.
		if s.Args, err = flows.ParseArgsJSON(string(v)); err != nil {
			return nil, fmt.Errorf("the flow's state field %q is damaged: %w", "args", err)
		}
	}
	if s.File == "" && s.Pipeline == "" {
		return nil, errors.New(`the flow's state names no workflow file ("file") and no pipeline string ("pipeline"); start pipeline flows with flowgate pipeline run`)
	}
	if err := s.readKept(); err != nil {
		return nil, err
	}
	if s.Prior == nil {
		s.Prior = map[string]string{}
	}
	s.asRead = maps.Clone(s.raw)
	return s, nil
}

// deadline returns the deadline of the gate at step, recording def (in
// UTC) as that deadline when the gate has none yet.
func (s *state) deadline(step string, def time.Time) time.Time {
	if t, ok := s.GateUntil[step]; ok {
		return t
	}
	if s.GateUntil == nil {
		s.GateUntil = map[string]time.Time{}
	}
	s.GateUntil[step] = def.UTC()
	return def.UTC()
}

// encode returns the state with the current results; changed says
// whether it differs from the state that was read.
func (s *state) encode() (b json.RawMessage, changed bool, err error) {
	if err := s.fill(); err != nil {
		return nil, false, err
	}
	return s.marshal()
}

// fill writes into raw what the pass keeps decoded: the results, gate
// deadlines, stage reports, stage outputs and prior outputs.
func (s *state) fill() (err error) {
	if len(s.Results) > 0 {
		if s.raw["results"], err = encodeEntries(s, s.Results, s.unread, s.read, maxInlineResults, "the result of step %s"); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		key string
		n   int
		v   any
	}{{"gate_until", len(s.GateUntil), s.GateUntil}, {sdk.StagesKey, len(s.Stages), s.Stages}} {
		if f.n > 0 {
			if s.raw[f.key], err = json.Marshal(f.v); err != nil {
				return err
			}
		}
	}
	if len(s.StageOut) > 0 {
		if err = s.keepStageOutputs(); err != nil {
			return err
		}
	}
	if len(s.Prior) > 0 {
		return s.keep(priorKey, priorFileKey, s.Prior, maxInlinePrior, func(sum string) any { return sum })
	}
	return nil
}

// marshal returns raw as the state's JSON, refusing one over maxState;
// changed says whether it differs from the state that was read.
func (s *state) marshal() (b json.RawMessage, changed bool, err error) {
	if b, err = json.Marshal(s.raw); err != nil {
		return nil, false, err
	}
	if len(b) > maxState {
		return nil, false, fmt.Errorf("%w: %d bytes, over the %d a flow's state may hold; %s", errStateTooLarge, len(b), maxState, s.largest())
	}
	return b, s.changed(), nil
}

// changed reports whether raw encodes to other JSON than the state that
// was read: whether a key came or went, or a value differs other than
// in how it is spaced (json.Marshal compacts each). Only the values
// whose bytes differ are compacted to compare, so a pass that changed
// nothing costs no encoding of the state.
func (s *state) changed() bool {
	if len(s.raw) != len(s.asRead) {
		return true
	}
	for k, v := range s.raw {
		old, ok := s.asRead[k]
		if !ok {
			return true
		}
		if bytes.Equal(v, old) {
			continue
		}
		a, errA := json.Marshal(v)
		b, errB := json.Marshal(old)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return true
		}
	}
	return false
}

// largest names what takes the most room in the encoded state, for the
// message that refuses a state too large: a step result or the output
// kept inline (with no data directory), or else what the caller or the
// gateway put there.
func (s *state) largest() string {
	key, most := "", 0
	for k, v := range s.raw {
		if len(v) > most {
			key, most = k, len(v)
		}
	}
	switch key {
	case "results":
		var entries map[string]json.RawMessage
		_ = json.Unmarshal(s.raw["results"], &entries) // encode just wrote it
		id, size := "", 0
		for k, v := range entries {
			if len(v) > size {
				id, size = k, len(v)
			}
		}
		return fmt.Sprintf("the largest step result is %s (%d bytes); have steps print small results or write large ones to files and print their paths", id, size)
	case stageOutKey:
		return fmt.Sprintf("the outputs of its state.get, state.set and diff.last stages are %d bytes; keep small values in state, or large ones in files whose paths you store", most)
	}
	return fmt.Sprintf("its args, env and decisions are too large (%q is %d bytes); pass large data as files", key, most)
}

// workflow loads what the flow runs: its workflow file, through cache, or
// the one-step workflow of its pipeline string. The file is read at every
// pass, so a file edited while the flow runs is run as it now stands from
// the next step on.
func (s *state) workflow(cache *flows.Cache) (*flows.Workflow, error) {
	if s.File == "" {
		wf, err := flows.PipelineWorkflow(s.Pipeline)
		if err != nil {
			return nil, fmt.Errorf("parse the pipeline %q: %w", s.Pipeline, err)
		}
		return wf, nil
	}
	wf, err := cache.Load(s.File)
	if err != nil {
		return nil, fmt.Errorf("load workflow %s: %w", s.File, err)
	}
	return wf, nil
}
