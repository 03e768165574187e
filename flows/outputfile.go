package flows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// OutputFile names where a pipeline flow's output is kept when the output
// is too large to keep in the flow's state: the pipeline controller then
// writes "output_file" instead of "output". SHA256 is the digest of the
// output's JSON. The output is either the file at Path, in the data
// directory of the gateway that finished the flow, or, when Kept is true,
// a value the flow keeps in the gateway's store (sdk.Host.KeepValue),
// which every gateway of a shared store reads (engine.Engine.Kept, or
// GET /v1/flows/{id}/kept/{sum} of a gateway's socket).
type OutputFile struct {
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256"`
	Kept   bool   `json:"kept,omitempty"`
}

// KeptReader returns the value a flow keeps in the gateway's store under
// digest sum (engine.Engine.Kept bound to the flow, or a gateway client's
// KeptValue).
type KeptReader func(sum string) ([]byte, error)

// Read returns the output, checked against its digest: from the file, or,
// for a kept output, from kept (which may be nil when the output is known
// to be a file). It fails, saying what to do, when the output is gone or
// was changed.
func (o OutputFile) Read(kept KeptReader) (json.RawMessage, error) {
	where, fix := o.Path, "the flow's data was removed, so run the pipeline again"
	var b []byte
	var err error
	switch {
	case o.Kept && kept == nil:
		return nil, fmt.Errorf("the flow's output is kept in the gateway's store as %s, which this reader cannot reach; read it through a gateway: GET /v1/flows/<flow id>/kept/%s on its socket", o.SHA256, o.SHA256)
	case o.Kept:
		where = "the gateway's store as " + o.SHA256
		fix = "if the flow was pruned, run the pipeline again; else ask again once the gateway and its store answer"
		b, err = kept(o.SHA256)
	default:
		b, err = os.ReadFile(o.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("the flow's output was kept in %s, which cannot be read (%v); %s", where, err, fix)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != o.SHA256 || !json.Valid(b) {
		return nil, fmt.Errorf("the flow's output in %s changed since the flow ended; run the pipeline again", where)
	}
	return b, nil
}

// RenderedKey and RenderedFileKey are where a pipeline flow's state keeps
// what the renderer (json, table) of a pipeline string printed: the text
// as a JSON string, or an OutputFile naming where it is kept.
const (
	RenderedKey     = "rendered"
	RenderedFileKey = "rendered_file"
)

// StateRendered returns what the renderer of a pipeline-string flow
// printed, from its state (see RenderedKey), read through kept when it is
// kept in the gateway's store; "" when nothing was rendered.
func StateRendered(state json.RawMessage, kept KeptReader) (string, error) {
	var s map[string]json.RawMessage
	if len(state) == 0 || json.Unmarshal(state, &s) != nil {
		return "", nil
	}
	raw := s[RenderedKey]
	if ref, ok := s[RenderedFileKey]; ok {
		var f OutputFile
		if err := json.Unmarshal(ref, &f); err != nil {
			return "", fmt.Errorf("the flow's state names its rendering badly: %w", err)
		}
		b, err := f.Read(kept)
		if err != nil {
			return "", err
		}
		raw = b
	}
	var text string
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", fmt.Errorf("the flow's rendering is not a JSON string: %w", err)
		}
	}
	return text, nil
}

// StateOutput returns the output of a pipeline flow from its state: the
// "output" the state holds, or the one its "output_file" names, read
// through kept when it is kept in the gateway's store (see
// OutputFile.Read). It returns nil, and no error, for a flow that has no
// output yet.
func StateOutput(state json.RawMessage, kept KeptReader) (json.RawMessage, error) {
	var s struct {
		Output json.RawMessage `json:"output"`
		File   *OutputFile     `json:"output_file"`
	}
	if len(state) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return nil, errors.New("the flow's state is not a JSON object; it holds no output")
	}
	if s.File != nil {
		return s.File.Read(kept)
	}
	return s.Output, nil
}
