package flows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// extensions is what Extensions returns. Read-only.
var extensions = [...]string{".lobster", ".yaml", ".yml", ".json"}

// Extensions returns the workflow file extensions Load accepts
// (case-insensitive), in a new slice the caller may change; .json is
// parsed as strict JSON, the others as YAML.
func Extensions() []string { return slices.Clone(extensions[:]) }

// IsWorkflowFile reports whether path has one of Extensions.
func IsWorkflowFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range extensions {
		if ext == e {
			return true
		}
	}
	return false
}

// Load reads, parses and validates the workflow file at path and every
// sub-workflow it names with a literal path (relative to the naming file's
// directory), detecting cycles. On failure it returns the problems as
// *Error values joined with errors.Join; the workflow is nil.
func Load(path string) (*Workflow, error) {
	return load(path, nil, nil)
}

// LoadSub loads the sub-workflow a step names when its path could only be
// known at run time (it contained ${arg} or $step refs): resolved is the
// templated path, relative to parent.File's directory. ancestors are the
// absolute paths of the workflows currently executing, outermost first,
// parent included; a path among them is a cycle.
func LoadSub(parent *Workflow, step *Step, resolved string, ancestors []string) (*Workflow, error) {
	return loadSub(parent, step, resolved, ancestors, nil)
}

// loadSub is LoadSub, noting each file it reads in read when that is not
// nil (see Cache).
func loadSub(parent *Workflow, step *Step, resolved string, ancestors []string, read *[]source) (*Workflow, error) {
	p := resolved
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(parent.File), p)
	}
	for _, a := range ancestors {
		if sameFile(a, p) {
			return nil, &Error{File: parent.File, Line: step.Line, Column: step.Column, Key: "workflow",
				Msg: fmt.Sprintf("Workflow step %s creates a cycle: %s is already being executed", step.ID, p)}
		}
	}
	if _, err := os.Stat(p); err != nil {
		return nil, &Error{File: parent.File, Line: step.Line, Column: step.Column, Key: "workflow",
			Msg: fmt.Sprintf("Workflow step %s workflow file not found: %s", step.ID, p)}
	}
	return load(p, ancestors, read)
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func load(path string, ancestors []string, read *[]source) (*Workflow, error) {
	abs, err := resolve(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	if !IsWorkflowFile(abs) {
		return nil, &Error{File: path, Msg: "Workflow file must end in .lobster, .yaml, .yml, or .json"}
	}
	data, err := readFile(abs, path)
	if err != nil {
		return nil, err
	}
	if read != nil {
		*read = append(*read, source{path: path, abs: abs, data: data})
	}
	wf, errs := parse(abs, data)
	if wf == nil {
		return nil, errs.err()
	}
	chain := append(append([]string(nil), ancestors...), abs)
	errs = append(errs, loadSubs(wf, wf.Steps, chain, "steps", read)...)
	if err := errs.err(); err != nil {
		return nil, err
	}
	return wf, nil
}

// loadSubs loads the literal sub-workflow paths of steps.
func loadSubs(wf *Workflow, steps []Step, chain []string, key string, read *[]source) errList {
	var errs errList
	for i := range steps {
		s := &steps[i]
		if s.Workflow == "" || hasTemplate(s.Workflow) {
			continue
		}
		sub, err := loadSub(wf, s, s.Workflow, chain, read)
		if err == nil {
			s.Sub = sub
			continue
		}
		var e *Error
		for _, one := range unjoin(err) {
			if errors.As(one, &e) {
				if e.File == wf.File && e.Key == "workflow" {
					e.Key = fmt.Sprintf("%s[%d].workflow", key, i)
				}
				errs = append(errs, e)
			}
		}
	}
	return errs
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Parse parses and validates a workflow held in memory; name is used for
// the format (by extension: .json is strict JSON, anything else YAML) and
// in error positions. Sub-workflows are not loaded: Step.Sub stays nil.
func Parse(name string, data []byte) (*Workflow, error) {
	wf, errs := parse(name, data)
	if err := errs.err(); err != nil {
		return nil, err
	}
	return wf, nil
}

func parse(name string, data []byte) (*Workflow, errList) {
	var root *yaml.Node
	var errs errList
	if e := fileTooLarge(name, int64(len(data))); e != nil {
		return nil, append(errs, e)
	}
	if strings.EqualFold(filepath.Ext(name), ".json") {
		n, err := jsonNode(data)
		if err != nil {
			line, col := offsetPos(data, err.offset)
			errs.add(name, line, col, "", "invalid JSON: %s", err.msg)
			return nil, errs
		}
		root = n
	} else {
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			errs.add(name, yamlErrLine(err), 0, "", "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
			return nil, errs
		}
		if len(doc.Content) > 0 {
			root = doc.Content[0]
		}
	}
	d := &decoder{file: name}
	wf := d.workflow(root)
	return wf, d.errs
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func yamlErrLine(err error) int {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

func offsetPos(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

type jsonErr struct {
	offset int64
	msg    string
}

// jsonNode parses strict JSON into a yaml.Node tree carrying line and
// column, so JSON and YAML files share one decoder.
func jsonNode(data []byte) (*yaml.Node, *jsonErr) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := jsonValue(dec, data, 0)
	if err != nil {
		return nil, err
	}
	if _, e := dec.Token(); e != io.EOF {
		return nil, &jsonErr{dec.InputOffset(), "unexpected data after the top-level value"}
	}
	return n, nil
}

const maxDepth = 200

func jsonValue(dec *json.Decoder, data []byte, depth int) (*yaml.Node, *jsonErr) {
	if depth > maxDepth {
		return nil, &jsonErr{dec.InputOffset(), "nesting too deep"}
	}
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		msg := err.Error()
		if err == io.EOF {
			msg = "unexpected end of input"
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &jsonErr{se.Offset, msg}
		}
		return nil, &jsonErr{dec.InputOffset(), msg}
	}
	// InputOffset before Token points at the separator preceding the value.
	off := start
	for off < int64(len(data)) && strings.ContainsRune(" \t\r\n,:", rune(data[off])) {
		off++
	}
	line, col := offsetPos(data, off)
	n := &yaml.Node{Line: line, Column: col}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
			for dec.More() {
				k, err := jsonValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				v, err := jsonValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, k, v)
			}
		case '[':
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
			for dec.More() {
				v, err := jsonValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, &jsonErr{dec.InputOffset(), err.Error()}
		}
	case string:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!str", t
	case json.Number:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!float", t.String()
	case bool:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!bool", strconv.FormatBool(t)
	case nil:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!null", "null"
	}
	return n, nil
}
