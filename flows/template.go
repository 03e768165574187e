package flows

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

var (
	argRE = regexp.MustCompile(`\$\{([A-Za-z0-9_-]+)\}`)
	refRE = regexp.MustCompile(`\$([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)`)
	// strictRefRE is a whole value that is exactly one step ref.
	strictRefRE = regexp.MustCompile(`^\$([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)$`)
)

// UnknownRefError is returned for a strict step ref (a condition, or a
// stdin that is exactly one ref) naming a step with no result.
type UnknownRefError struct {
	// Ref is "id.path" as written, without the "$".
	Ref string
}

func (e *UnknownRefError) Error() string { return "Unknown step reference: " + e.Ref }

// ResolveArgsTemplate replaces each ${name} whose name is a key of args
// with the arg's string form (JavaScript String(): arrays join with ",",
// objects become "[object Object]"); other ${...} stay literal so the shell
// can expand them. It is the only templating cwd: values get.
func ResolveArgsTemplate(s string, args map[string]any) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return argRE.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := args[m[2:len(m)-1]]
		if !ok {
			return m
		}
		return jsString(v)
	})
}

// ResolveTemplate resolves ${arg} templates, then $stepId.path refs
// against results (lobster-format §5.1, §5.2), as run:, workflow:,
// workflow_args string values, env values and non-ref stdin strings are
// resolved. Refs to ids without a result stay literal; a known id with a
// missing path renders "" ("false" for approved and skipped); objects and
// arrays render as compact JSON.
func ResolveTemplate(s string, args map[string]any, results map[string]StepResult) string {
	s = ResolveArgsTemplate(s, args)
	if !strings.Contains(s, "$") {
		return s
	}
	return refRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := refRE.FindStringSubmatch(m)
		r, ok := results[sub[1]]
		if !ok {
			return m
		}
		v, found := lookupPath(r, sub[2])
		if !found {
			if sub[2] == "approved" || sub[2] == "skipped" {
				return "false"
			}
			return ""
		}
		return renderValue(v)
	})
}

// LookupRef resolves a strict "$id.path" ref: an id without a result is an
// *UnknownRefError; found is false when the path is undefined.
func LookupRef(ref string, results map[string]StepResult) (v any, found bool, err error) {
	m := strictRefRE.FindStringSubmatch(strings.TrimSpace(ref))
	if m == nil {
		return nil, false, fmt.Errorf("not a step reference: %q", ref)
	}
	r, ok := results[m[1]]
	if !ok {
		return nil, false, &UnknownRefError{Ref: m[1] + "." + m[2]}
	}
	v, found = lookupPath(r, m[2])
	return v, found, nil
}

// IsStepRef reports whether s, trimmed, is exactly one "$id.path" ref.
func IsStepRef(s string) bool { return strictRefRE.MatchString(strings.TrimSpace(s)) }

// ResolveStdin resolves a step's stdin value (lobster-format §5.3): nil
// means no input (ok false); a string that is exactly one step ref is
// looked up strictly (an unknown id is an *UnknownRefError, an undefined
// path means no input); other strings are templates; other values pass
// through as they are.
func ResolveStdin(stdin any, args map[string]any, results map[string]StepResult) (v any, ok bool, err error) {
	switch s := stdin.(type) {
	case nil:
		return nil, false, nil
	case string:
		if IsStepRef(s) {
			return LookupRef(s, results)
		}
		return ResolveTemplate(s, args, results), true, nil
	}
	return stdin, true, nil
}

// StdinText is what a shell step reads for a resolved stdin value: a
// string as it is, anything else as compact JSON.
func StdinText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return renderJSON(v)
}

// lookupPath walks a dotted path: the first segment names a result field,
// later ones object keys or array indexes.
func lookupPath(r StepResult, path string) (any, bool) {
	segs := strings.Split(path, ".")
	v, ok := r.Field(segs[0])
	if !ok {
		return nil, false
	}
	for _, seg := range segs[1:] {
		switch c := v.(type) {
		case *Object:
			v, ok = c.Get(seg)
			if !ok {
				return nil, false
			}
		case map[string]any:
			v, ok = c[seg]
			if !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != seg {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// renderValue renders a resolved ref into template text.
func renderValue(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool, float64, int, int64, json.Number:
		return jsString(t)
	}
	return renderJSON(v)
}

// renderJSON is JSON.stringify without indentation (Stringify).
func renderJSON(v any) string { return Stringify(v) }

// jsString is JavaScript's String(v) for decoded JSON values.
func jsString(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return jsNumber(t)
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case json.Number:
		return t.String()
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	case *Object, map[string]any:
		return "[object Object]"
	}
	return fmt.Sprint(v)
}

func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	// encoding/json formats floats the way ECMAScript does.
	b, _ := json.Marshal(f)
	return string(b)
}

// hasTemplate reports whether s contains an ${arg} or $step.path template.
func hasTemplate(s string) bool {
	return argRE.MatchString(s) || refRE.MatchString(s)
}
