package flows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// OutputFile names the file that holds a pipeline flow's output when the
// output is too large to keep in the flow's state: the pipeline
// controller then writes "output_file" instead of "output". SHA256 is the
// digest of the file's bytes, which are the output's JSON.
type OutputFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Read returns the output the file holds, checked against its digest.
// It fails, saying what to do, when the file is gone or was changed.
func (o OutputFile) Read() (json.RawMessage, error) {
	b, err := os.ReadFile(o.Path)
	if err != nil {
		return nil, fmt.Errorf("the flow's output was kept in %s, which cannot be read (%v); the flow's data was removed, so run the pipeline again", o.Path, err)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != o.SHA256 || !json.Valid(b) {
		return nil, fmt.Errorf("the flow's output in %s changed since the flow ended; run the pipeline again", o.Path)
	}
	return b, nil
}

// StateOutput returns the output of a pipeline flow from its state: the
// "output" the state holds, or the one its "output_file" names. It
// returns nil, and no error, for a flow that has no output yet.
func StateOutput(state json.RawMessage) (json.RawMessage, error) {
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
		return s.File.Read()
	}
	return s.Output, nil
}
