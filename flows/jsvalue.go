package flows

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The data stages compare and order values the way Lobster's JavaScript
// does; these helpers are the few JavaScript semantics they need, over
// decoded JSON values (nil, bool, float64, string, []any, *Object; a
// map[string]any from YAML reads the same) and undefined for a missing
// field.

// itemPath reads a dotted path ("a.b.0") from v the way Lobster's
// getByPath does: empty segments are ignored (so "" is v itself), object
// keys and array indexes are followed, and a missing step, or a step into
// null or a scalar, gives undefined.
func itemPath(v any, path string) any {
	for part := range strings.SplitSeq(path, ".") {
		if part != "" {
			v = member(v, part)
		}
	}
	return v
}

// member is v[key] for an object key or an array index; undefined when v
// has no such member or is not an object or array.
func member(v any, key string) any {
	switch t := v.(type) {
	case *Object:
		if next, ok := t.Get(key); ok {
			return next
		}
	case map[string]any:
		if next, ok := t[key]; ok {
			return next
		}
	case []any:
		i, err := strconv.Atoi(key)
		if err == nil && i >= 0 && i < len(t) && strconv.Itoa(i) == key {
			return t[i]
		}
	}
	return undefined
}

// toObject is v as an ordered object: itself when it is one, a map's
// keys sorted; ok is false for anything else.
func toObject(v any) (*Object, bool) {
	switch t := v.(type) {
	case *Object:
		return t, true
	case map[string]any:
		o := NewObject(len(t))
		for _, k := range sortedKeys(t) {
			o.Set(k, t[k])
		}
		return o, true
	}
	return nil, false
}

// defined turns undefined into null, for values that leave a stage.
func defined(v any) any {
	if v == undefined {
		return nil
	}
	return v
}

// jsToNumber is JavaScript's Number(v): "" and blanks are 0, null is 0,
// undefined and non-numeric strings NaN, booleans 0 or 1, arrays and
// objects through their string form.
func jsToNumber(v any) float64 {
	switch t := v.(type) {
	case nil:
		return 0
	case undefinedT:
		return math.NaN()
	case bool:
		if t {
			return 1
		}
		return 0
	case float64:
		return t
	case string:
		if strings.TrimSpace(t) == "" {
			return 0
		}
		if f, ok := strictNumber(t); ok {
			return f
		}
		return math.NaN()
	}
	return jsToNumber(jsString(v))
}

// isPrimitive reports whether v is not an array or object.
func isPrimitive(v any) bool {
	switch v.(type) {
	case []any, *Object, map[string]any:
		return false
	}
	return true
}

// looseEqual is JavaScript's == (the Abstract Equality Comparison): null
// and undefined equal each other only; a boolean compares as a number; a
// string and a number compare as numbers ("1" == 1, "" == 0, "" == false);
// an array or object compares with a primitive through its string form
// and with another array or object never (decoded values are distinct).
func looseEqual(a, b any) bool {
	an := a == nil || a == undefined
	bn := b == nil || b == undefined
	if an || bn {
		return an && bn
	}
	switch x := a.(type) {
	case bool:
		return looseEqual(jsToNumber(x), b)
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y
		case string:
			return x == jsToNumber(y)
		case bool:
			return x == jsToNumber(y)
		}
		return looseEqual(x, jsString(b))
	case string:
		switch y := b.(type) {
		case string:
			return x == y
		case float64, bool:
			return looseEqual(b, a)
		}
		return x == jsString(b)
	}
	if isPrimitive(b) {
		return looseEqual(b, a)
	}
	return false
}

// jsLess is JavaScript's a < b: two strings (after arrays and objects
// become strings) compare by UTF-16 code units, anything else as numbers,
// and NaN compares false.
func jsLess(a, b any) bool {
	if c, ok := jsStringOrder(a, b); ok {
		return c < 0
	}
	return jsToNumber(a) < jsToNumber(b)
}

// jsLessEqual is JavaScript's a <= b, false when either side is NaN.
func jsLessEqual(a, b any) bool {
	if c, ok := jsStringOrder(a, b); ok {
		return c <= 0
	}
	return jsToNumber(a) <= jsToNumber(b)
}

// jsStringOrder compares a and b as strings when JavaScript's relational
// operators would: both are strings once arrays and objects become
// their string form.
func jsStringOrder(a, b any) (int, bool) {
	if !isPrimitive(a) {
		a = jsString(a)
	}
	if !isPrimitive(b) {
		b = jsString(b)
	}
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return compareUTF16(as, bs), true
	}
	return 0, false
}

// compareUTF16 orders strings by UTF-16 code units, as JavaScript does;
// it differs from Go's byte order only above U+FFFF.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			return int(x[i]) - int(y[i])
		}
	}
	return len(x) - len(y)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
