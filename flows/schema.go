package flows

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// The JSON Schema subset input gates use: type (a name or a list),
// properties, required, additionalProperties (bool or schema), items,
// enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// minLength, maxLength, minItems, maxItems. Other keywords are accepted
// and ignored, as Ajv does with strict mode off; responses are checked
// against the subset only.

var schemaTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// CheckSchema reports the first structural problem in a response schema,
// or nil when the subset keywords are well formed.
func CheckSchema(schema map[string]any) error {
	return checkSchema(schema, "", 0)
}

func checkSchema(s map[string]any, at string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("schema%s is nested too deeply", at)
	}
	bad := func(k, want string) error { return fmt.Errorf("schema%s/%s must be %s", at, k, want) }
	if t, ok := s["type"]; ok {
		if _, ok := typeNames(t); !ok {
			return bad("type", "one of the allowed types ("+strings.Join(schemaTypes, ", ")+") or a list of them")
		}
	}
	if p, ok := s["properties"]; ok {
		m, ok := p.(map[string]any)
		if !ok {
			return bad("properties", "an object")
		}
		for _, k := range sortedKeys(m) {
			sub, ok := m[k].(map[string]any)
			if !ok {
				if _, isBool := m[k].(bool); isBool {
					continue
				}
				return bad("properties/"+k, "an object or a boolean")
			}
			if err := checkSchema(sub, at+"/properties/"+k, depth+1); err != nil {
				return err
			}
		}
	}
	if r, ok := s["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return bad("required", "an array of strings")
		}
		for _, e := range list {
			if _, ok := e.(string); !ok {
				return bad("required", "an array of strings")
			}
		}
	}
	if e, ok := s["enum"]; ok {
		if _, ok := e.([]any); !ok {
			return bad("enum", "an array")
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		v, ok := s[k]
		if !ok {
			continue
		}
		switch sub := v.(type) {
		case bool:
		case map[string]any:
			if err := checkSchema(sub, at+"/"+k, depth+1); err != nil {
				return err
			}
		default:
			return bad(k, "an object or a boolean")
		}
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if v, ok := s[k]; ok {
			if _, ok := v.(float64); !ok {
				return bad(k, "a number")
			}
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
		if v, ok := s[k]; ok {
			if f, ok := v.(float64); !ok || f < 0 || f != math.Trunc(f) {
				return bad(k, "a non-negative integer")
			}
		}
	}
	return nil
}

func typeNames(t any) ([]string, bool) {
	var names []string
	switch v := t.(type) {
	case string:
		names = []string{v}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			names = append(names, s)
		}
	default:
		return nil, false
	}
	for _, n := range names {
		if !slices.Contains(schemaTypes, n) {
			return nil, false
		}
	}
	return names, true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ValidateResponse checks an input gate's response against its schema and
// returns the first violation as the reference words it:
// "Workflow input step <id> response failed schema validation at
// <path>: <message>", or nil when the response conforms.
func ValidateResponse(stepID string, schema map[string]any, response any) error {
	path, msg := validate(schema, response, "", 0)
	if msg == "" {
		return nil
	}
	if path == "" {
		path = "/"
	}
	return fmt.Errorf("Workflow input step %s response failed schema validation at %s: %s", stepID, path, msg)
}

// SchemaViolation returns the instance path ("/" for the root) and the
// message of v's first violation of schema, or two empty strings when v
// conforms: the same check input gates use, for callers that word the
// failure themselves (a model stage's --output-schema).
func SchemaViolation(schema map[string]any, v any) (path, msg string) {
	path, msg = validate(schema, v, "", 0)
	if msg != "" && path == "" {
		path = "/"
	}
	return path, msg
}

// validate returns the instance path and message of the first violation.
func validate(s map[string]any, v any, at string, depth int) (string, string) {
	if depth > maxDepth {
		return at, "is nested too deeply"
	}
	if t, ok := s["type"]; ok {
		names, _ := typeNames(t)
		if !slices.ContainsFunc(names, func(n string) bool { return hasType(v, n) }) {
			return at, "must be " + strings.Join(names, ",")
		}
	}
	if c, ok := s["const"]; ok && !strictEqual(c, v) {
		return at, "must be equal to constant"
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return strictEqual(x, v) }) {
		return at, "must be equal to one of the allowed values"
	}
	switch x := v.(type) {
	case float64:
		for _, b := range []struct {
			k  string
			op string
			ok func(lim float64) bool
		}{
			{"maximum", "<=", func(l float64) bool { return x <= l }},
			{"minimum", ">=", func(l float64) bool { return x >= l }},
			{"exclusiveMaximum", "<", func(l float64) bool { return x < l }},
			{"exclusiveMinimum", ">", func(l float64) bool { return x > l }},
		} {
			if lim, ok := s[b.k].(float64); ok && !b.ok(lim) {
				return at, fmt.Sprintf("must be %s %s", b.op, jsNumber(lim))
			}
		}
	case string:
		n := float64(utf8.RuneCountInString(x))
		if lim, ok := s["maxLength"].(float64); ok && n > lim {
			return at, fmt.Sprintf("must NOT have more than %s characters", jsNumber(lim))
		}
		if lim, ok := s["minLength"].(float64); ok && n < lim {
			return at, fmt.Sprintf("must NOT have fewer than %s characters", jsNumber(lim))
		}
	case []any:
		n := float64(len(x))
		if lim, ok := s["maxItems"].(float64); ok && n > lim {
			return at, fmt.Sprintf("must NOT have more than %s items", jsNumber(lim))
		}
		if lim, ok := s["minItems"].(float64); ok && n < lim {
			return at, fmt.Sprintf("must NOT have fewer than %s items", jsNumber(lim))
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				if p, m := validate(items, e, fmt.Sprintf("%s/%d", at, i), depth+1); m != "" {
					return p, m
				}
			}
		}
	case *Object, map[string]any:
		obj, _ := toObject(x)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, _ := r.(string); !hasKey(obj, name) {
					return at, fmt.Sprintf("must have required property '%s'", name)
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for _, k := range slices.Sorted(slices.Values(obj.Keys())) {
			val, _ := obj.Get(k)
			if sub, ok := props[k].(map[string]any); ok {
				if p, m := validate(sub, val, at+"/"+escapePointer(k), depth+1); m != "" {
					return p, m
				}
				continue
			}
			if _, declared := props[k]; declared {
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return at, "must NOT have additional properties"
				}
			case map[string]any:
				if p, m := validate(ap, val, at+"/"+escapePointer(k), depth+1); m != "" {
					return p, m
				}
			}
		}
	}
	return "", ""
}

func hasKey(o *Object, k string) bool {
	_, ok := o.Get(k)
	return ok
}

func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

func hasType(v any, name string) bool {
	switch name {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := toObject(v)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}
