package flows

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Stringify is JSON.stringify(v): compact, *Object keys in their order,
// <, > and & as they are, U+2028 and U+2029 unescaped, -0 as 0 and
// non-finite numbers as null. Values of types JSON decoding never yields
// go through encoding/json.
func Stringify(v any) string {
	return string(appendJSON(nil, v, "", ""))
}

// StringifyIndent is JSON.stringify(v, null, indent): one member a line,
// nested members indented once more, empty arrays and objects as [] and
// {}.
func StringifyIndent(v any, indent string) string {
	return string(appendJSON(nil, v, indent, ""))
}

// appendJSON appends v's JSON to b. With indent set, members go one a
// line below prefix, indented by it.
func appendJSON(b []byte, v any, indent, prefix string) []byte {
	switch t := v.(type) {
	case nil, undefinedT:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, t)
	case float64:
		return appendNumber(b, t)
	case int:
		return strconv.AppendInt(b, int64(t), 10)
	case string:
		return appendString(b, t)
	case []any:
		if len(t) == 0 {
			return append(b, "[]"...)
		}
		b = append(b, '[')
		inner := prefix + indent
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, indent, inner)
			b = appendJSON(b, e, indent, inner)
		}
		return append(newline(b, indent, prefix), ']')
	case *Object:
		if t.Len() == 0 {
			return append(b, "{}"...)
		}
		b = append(b, '{')
		inner := prefix + indent
		for i, k := range t.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, indent, inner)
			b = appendString(b, k)
			b = append(b, ':')
			if indent != "" {
				b = append(b, ' ')
			}
			b = appendJSON(b, t.vals[i], indent, inner)
		}
		return append(newline(b, indent, prefix), '}')
	case map[string]any:
		// A map (a YAML value, a gate's record) has no order: its keys
		// are written sorted.
		o, _ := toObject(t)
		return appendJSON(b, o, indent, prefix)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if indent == "" {
		return append(b, raw...)
	}
	// A foreign value is re-read so it indents as the rest does.
	if decoded, err := DecodeJSON(raw); err == nil {
		return appendJSON(b, decoded, indent, prefix)
	}
	return append(b, raw...)
}

func newline(b []byte, indent, prefix string) []byte {
	if indent == "" {
		return b
	}
	return append(append(b, '\n'), prefix...)
}

// appendNumber writes f as ECMAScript's Number::toString does for
// JSON.stringify (the format encoding/json also follows).
func appendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(b, "null"...)
	case f == 0:
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 is written 1e-7.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString writes s quoted as JSON.stringify does: ", \ and control
// characters escaped (\b \f \n \r \t by name, others as \u00XX); bytes
// that are not UTF-8 become U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
