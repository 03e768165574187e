package sdk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

// Output is what a flow produced (Flow.Output), as its controller gave it
// to Finish. The record holds a small output itself (Value); one too
// large for the record is kept outside it, and File names where, with
// the digest a reader checks it against. Text, when set, is what the
// flow prints for people ahead of its output (a pipeline string that
// ends in a renderer prints its table so), held or kept the same way.
type Output struct {
	// Value is the output's JSON when the record holds it; absent when
	// File names where it is kept.
	Value json.RawMessage `json:"value,omitempty"`
	// File names where an output too large for the record is kept; nil
	// when Value holds it.
	File *OutputFile `json:"file,omitempty"`
	// Text is what the flow prints ahead of its output when the record
	// holds it; empty when there is none or TextFile names it.
	Text string `json:"text,omitempty"`
	// TextFile names where a Text too large for the record is kept (its
	// bytes are the text as a JSON string).
	TextFile *OutputFile `json:"text_file,omitempty"`
}

// OutputFile names a value a flow produced that is kept outside its
// record, by the SHA-256 of its bytes (lowercase hex): a value the flow
// keeps in the gateway's store (Kept, Host.KeepValue), which every
// gateway of a shared store reads, or else the file at Path in the data
// directory of the gateway that finished the flow.
type OutputFile struct {
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256"`
	Kept   bool   `json:"kept,omitempty"`
}

// KeptReader returns the value a flow keeps in the gateway's store under
// digest sum (Host.KeptValue bound to the flow, or a gateway client's
// KeptValue). Nil when the reader has no gateway to ask.
type KeptReader func(sum string) ([]byte, error)

// ReadValue returns the output's JSON: Value, or the value File names,
// read through kept when it is kept in the gateway's store. It returns
// nil, and no error, for a nil Output.
func (o *Output) ReadValue(kept KeptReader) (json.RawMessage, error) {
	if o == nil {
		return nil, nil
	}
	if o.File != nil {
		return o.File.Read(kept)
	}
	return o.Value, nil
}

// ReadText returns Text, or the text TextFile names, read through kept
// when it is kept in the gateway's store; "" for a nil Output or one
// without text.
func (o *Output) ReadText(kept KeptReader) (string, error) {
	if o == nil {
		return "", nil
	}
	if o.TextFile == nil {
		return o.Text, nil
	}
	b, err := o.TextFile.Read(kept)
	if err != nil {
		return "", err
	}
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return "", fmt.Errorf("the flow's text output is not a JSON string: %w", err)
	}
	return text, nil
}

// Read returns the kept value, checked against its digest: from the
// gateway's store through kept (which may be nil when the value is known
// to be a file), or from the file. It fails, saying what to do, when the
// value is gone or was changed.
func (f *OutputFile) Read(kept KeptReader) (json.RawMessage, error) {
	where, fix := f.Path, "the flow's data was removed, so run the flow again"
	var b []byte
	var err error
	switch {
	case f.Kept && kept == nil:
		return nil, fmt.Errorf("the flow's output is kept in the gateway's store as %s, which this reader cannot reach; read it through a gateway: GET /v1/flows/<flow id>/kept/%s on its socket", f.SHA256, f.SHA256)
	case f.Kept:
		where = "the gateway's store as " + f.SHA256
		fix = "if the flow was pruned, run it again; else ask again once the gateway and its store answer"
		b, err = kept(f.SHA256)
	default:
		b, err = os.ReadFile(f.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("the flow's output was kept in %s, which cannot be read (%v); %s", where, err, fix)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != f.SHA256 || !json.Valid(b) {
		return nil, fmt.Errorf("the flow's output in %s changed since the flow ended; run the flow again", where)
	}
	return b, nil
}
