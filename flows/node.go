package flows

import (
	"math"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds alias expansion while decoding values ("billion laughs").
const maxNodes = 1 << 20

// decoder turns a yaml.Node tree into the model, collecting problems.
type decoder struct {
	file string
	errs errList
	// pipelineErrs are pipeline: texts that do not parse, which fail
	// their step at run time rather than the load.
	pipelineErrs errList
	nodes        int
	// pos records where keys checked after decoding (ids, conditions,
	// stdin, for_each) were written, by dotted key.
	pos map[string]*yaml.Node
}

// remember records the position of key in o under the dotted name full.
func (d *decoder) remember(o *object, key, full string) {
	if n, ok := o.keys[key]; ok {
		if d.pos == nil {
			d.pos = map[string]*yaml.Node{}
		}
		d.pos[full] = n
	}
}

func (d *decoder) errAt(n *yaml.Node, key, format string, args ...any) {
	line, col := 0, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	d.errs.add(d.file, line, col, key, format, args...)
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// str returns n's string value; ok is false for anything but a string.
func str(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	switch n.ShortTag() {
	case "!!null", "!!bool", "!!int", "!!float":
		return "", false
	}
	return n.Value, true
}

func boolean(n *yaml.Node) (v, ok bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, false
	}
	if n.Decode(&v) != nil {
		return false, false
	}
	return v, true
}

// number returns n's numeric value; ok is false for non-numbers.
func number(n *yaml.Node) (float64, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	if t := n.ShortTag(); t != "!!int" && t != "!!float" {
		return 0, false
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		return 0, false
	}
	return f, true
}

// positiveInt reports whether n is an integer in [1, max].
func positiveInt(n *yaml.Node, max float64) (int, bool) {
	f, ok := number(n)
	if !ok || f != math.Trunc(f) || f < 1 || f > max || math.IsInf(f, 0) {
		return 0, false
	}
	return int(f), true
}

func nonNegative(n *yaml.Node) (float64, bool) {
	f, ok := number(n)
	if !ok || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// value decodes n into plain Go data: string, float64, bool, nil, []any,
// and a mapping as an *Object whose keys keep the order they were written
// in, as Lobster's YAML parser keeps them, so an arg's default, a stdin
// literal or an approval's items come out of a run in the file's order.
// YAML tags beyond the core schema decode as strings.
func (d *decoder) value(n *yaml.Node) any {
	return d.valueDepth(n, 0, true)
}

// plainValue is value with mappings as map[string]any, for what is only
// ever read by key (a response schema).
func (d *decoder) plainValue(n *yaml.Node) any {
	return d.valueDepth(n, 0, false)
}

func (d *decoder) valueDepth(n *yaml.Node, depth int, ordered bool) any {
	d.nodes++
	if d.nodes > maxNodes || depth > maxDepth {
		if d.nodes == maxNodes+1 || depth == maxDepth+1 {
			d.errAt(n, "", "document too large or too deeply nested")
		}
		return nil
	}
	n = deref(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		key := func(i int) string {
			if k := deref(n.Content[i]); k != nil {
				return k.Value
			}
			return ""
		}
		if ordered {
			o := NewObject(len(n.Content) / 2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				o.Set(key(i), d.valueDepth(n.Content[i+1], depth+1, true))
			}
			return o
		}
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[key(i)] = d.valueDepth(n.Content[i+1], depth+1, false)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, d.valueDepth(c, depth+1, ordered))
		}
		return s
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil
		case "!!bool":
			var b bool
			if n.Decode(&b) == nil {
				return b
			}
		case "!!int", "!!float":
			if f, ok := number(n); ok {
				return f
			}
		}
		return n.Value
	}
	return nil
}

// object is a decoded YAML mapping with its key positions.
type object struct {
	n      *yaml.Node
	keys   map[string]*yaml.Node
	values map[string]*yaml.Node
}

func asObject(n *yaml.Node) (*object, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	o := &object{n: n, keys: map[string]*yaml.Node{}, values: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil {
			continue
		}
		o.keys[k.Value] = n.Content[i]
		o.values[k.Value] = n.Content[i+1]
	}
	return o, true
}

// get returns the value of key when it is present and not null.
func (o *object) get(key string) (*yaml.Node, bool) {
	v, ok := o.values[key]
	if !ok || isNull(v) {
		return nil, false
	}
	return v, true
}

// at returns the node to report a problem with key at: the key itself when
// present, else the mapping.
func (o *object) at(key string) *yaml.Node {
	if k, ok := o.keys[key]; ok {
		return k
	}
	return o.n
}

// stringMap decodes a map of templates, keeping string values only.
func stringMap(n *yaml.Node) map[string]string {
	o, ok := asObject(n)
	if !ok {
		return nil
	}
	m := map[string]string{}
	for k, v := range o.values {
		if s, ok := str(v); ok {
			m[k] = s
		}
	}
	return m
}
