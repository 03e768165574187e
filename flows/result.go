package flows

import (
	"bytes"
	"encoding/json"
	"strings"
)

// StepResult is what a step leaves for later steps to reference
// (lobster-format §5.2, §5.4). JSON-encoded it uses the reference's field
// names; absent fields are omitted, and a JSON value of null is kept apart
// from no JSON value by HasJSON (likewise HasSubject, HasResponse).
type StepResult struct {
	ID string `json:"id"`
	// Stdout is nil when the step produced no stdout field at all.
	Stdout *string `json:"stdout,omitempty"`
	// JSON is meaningful only when HasJSON is true.
	JSON    any  `json:"-"`
	HasJSON bool `json:"-"`
	// Approved is nil until an approval gate on the step was decided.
	Approved    *bool  `json:"approved,omitempty"`
	ApprovedBy  string `json:"approvedBy,omitempty"`
	InitiatedBy string `json:"initiatedBy,omitempty"`
	Subject     any    `json:"-"`
	HasSubject  bool   `json:"-"`
	Response    any    `json:"-"`
	HasResponse bool   `json:"-"`
	Skipped     bool   `json:"skipped,omitempty"`
	// Error and ErrorMessage are set for a failed step whose on_error was
	// continue or skip_rest.
	Error        bool   `json:"error,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	// StdoutFile, when set, names the file that holds Stdout (a task's
	// log), and StdoutSHA256 its digest. Encoded, such a result carries
	// neither stdout nor json, only the file: a flow's state stays small
	// however much its steps print. Whoever decodes it reads the file back
	// with SetStdout before a reference uses it.
	StdoutFile   string `json:"stdoutFile,omitempty"`
	StdoutSHA256 string `json:"stdoutSha256,omitempty"`
	// Derived marks the result of a step that combines other steps'
	// results (a parallel or workflow step) and is too large to copy
	// inline. Encoded, it carries neither stdout nor json: whoever decodes
	// it computes them again from the results it combines, which are kept.
	Derived bool `json:"derived,omitempty"`
	// Rendered marks a pipeline step whose Stdout is what a json or table
	// stage printed, with no items after it: a sink. Run as a pipeline
	// string, Lobster prints the rendering ahead of its envelope and the
	// output is [] (see plugins/pipeline).
	Rendered bool `json:"rendered,omitempty"`
}

// SetStdout sets r's stdout to s and its JSON to what s parses to, as a
// run: step's result has them.
func (r *StepResult) SetStdout(s string) {
	r.Stdout = &s
	r.JSON, r.HasJSON = ParseJSON(s)
}

// ParseJSON parses trimmed stdout the way the reference does: ok is false
// for empty or invalid JSON. Numbers decode as float64, objects as
// *Object with their keys in order (DecodeJSON).
func ParseJSON(s string) (v any, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	v, err := DecodeJSON([]byte(s))
	if err != nil {
		return nil, false
	}
	return v, true
}

// ShellResult is the result of a run: step that printed stdout.
func ShellResult(id, stdout string) StepResult {
	r := StepResult{ID: id}
	r.SetStdout(stdout)
	return r
}

// SkippedResult is the result of a step whose condition was false.
func SkippedResult(id string) StepResult {
	return StepResult{ID: id, Skipped: true}
}

// FailedResult is the result of a failed step with on_error continue or
// skip_rest.
func FailedResult(id string, err error) StepResult {
	return StepResult{ID: id, Error: true, ErrorMessage: err.Error()}
}

// SyntheticResult is the result of a step that executes nothing (an
// approval-only step), built from its resolved stdin: nil gives just the
// id, a string is stdout (and JSON when it parses), anything else is the
// JSON with its serialisation as stdout.
func SyntheticResult(id string, stdin any) StepResult {
	switch v := stdin.(type) {
	case nil:
		return StepResult{ID: id}
	case string:
		return ShellResult(id, v)
	default:
		s := renderJSON(v)
		return StepResult{ID: id, Stdout: &s, JSON: v, HasJSON: true}
	}
}

// InputResult is the result of an answered input gate.
func InputResult(id string, subject, response any) StepResult {
	return StepResult{ID: id, Subject: subject, HasSubject: true, Response: response, HasResponse: true}
}

// Field returns the named top-level field of r as a reference path sees
// it; ok is false when the field is absent (undefined in the reference).
func (r StepResult) Field(name string) (any, bool) {
	switch name {
	case "id":
		return r.ID, true
	case "stdout":
		if r.Stdout != nil {
			return *r.Stdout, true
		}
	case "json":
		return r.JSON, r.HasJSON
	case "approved":
		if r.Approved != nil {
			return *r.Approved, true
		}
	case "approvedBy":
		return r.ApprovedBy, r.ApprovedBy != ""
	case "initiatedBy":
		return r.InitiatedBy, r.InitiatedBy != ""
	case "subject":
		return r.Subject, r.HasSubject
	case "response":
		return r.Response, r.HasResponse
	case "skipped":
		return true, r.Skipped
	case "error":
		return true, r.Error
	case "errorMessage":
		return r.ErrorMessage, r.Error
	}
	return nil, false
}

type stepResultJSON StepResult

// MarshalJSON encodes r with the reference's field names, including json,
// subject and response when set (even when their value is null). A result
// with a StdoutFile leaves stdout and json to the file, a Derived one to
// the results it combines.
func (r StepResult) MarshalJSON() ([]byte, error) {
	if r.StdoutFile != "" || r.Derived {
		r.Stdout, r.JSON, r.HasJSON = nil, nil, false
	}
	base, err := json.Marshal(stepResultJSON(r))
	if err != nil {
		return nil, err
	}
	var extra bytes.Buffer
	for _, f := range []struct {
		name string
		v    any
		set  bool
	}{{"json", r.JSON, r.HasJSON}, {"subject", r.Subject, r.HasSubject}, {"response", r.Response, r.HasResponse}} {
		if !f.set {
			continue
		}
		extra.WriteString(`,"` + f.name + `":`)
		extra.WriteString(Stringify(f.v))
	}
	return append(append(base[:len(base)-1], extra.Bytes()...), '}'), nil
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (r *StepResult) UnmarshalJSON(b []byte) error {
	var base stepResultJSON
	if err := json.Unmarshal(b, &base); err != nil {
		return err
	}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal(b, &extra); err != nil {
		return err
	}
	*r = StepResult(base)
	for name, dst := range map[string]struct {
		v   *any
		set *bool
	}{"json": {&r.JSON, &r.HasJSON}, "subject": {&r.Subject, &r.HasSubject}, "response": {&r.Response, &r.HasResponse}} {
		raw, ok := extra[name]
		if !ok {
			continue
		}
		v, err := DecodeJSON(raw)
		if err != nil {
			return err
		}
		*dst.v, *dst.set = v, true
	}
	return nil
}

// Output applies the workflow output rule (lobster-format §5.5): the
// output is the items of the last step, in file order, whose result
// exists and Succeeded (skipped steps and on_error failures do not count).
// It returns the items, never nil; an empty slice when no step counts.
func Output(wf *Workflow, results map[string]StepResult) []any {
	for i := len(wf.Steps) - 1; i >= 0; i-- {
		if r, ok := results[wf.Steps[i].ID]; ok && r.Succeeded() {
			return OutputItems(r)
		}
	}
	return []any{}
}

// OutputItems returns the output items one result contributes: its JSON
// (an array is spread), else its response, else its stdout as one item
// (none when empty).
func OutputItems(r StepResult) []any {
	items := func(v any) []any {
		if a, ok := v.([]any); ok {
			return a
		}
		return []any{v}
	}
	switch {
	case r.HasJSON:
		return items(r.JSON)
	case r.HasResponse:
		return items(r.Response)
	case r.Stdout != nil && *r.Stdout != "":
		return []any{*r.Stdout}
	}
	return []any{}
}

// Succeeded reports whether r counts for the output rule: it was neither
// skipped nor a recorded failure.
func (r StepResult) Succeeded() bool { return !r.Skipped && !r.Error }
