package flows

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// maxJSONDepth bounds how deeply DecodeJSON nests, as encoding/json does,
// so a hostile document cannot exhaust the stack.
const maxJSONDepth = 10000

// DecodeJSON decodes one JSON document the way JSON.parse does: objects
// become *Object with their keys in JavaScript's order, arrays []any,
// numbers float64, and null nil. Blanks around the value are allowed. A
// document that is not valid JSON fails with encoding/json's description
// of the fault (its offset and the character found).
//
// It is a small hand-written parser rather than json.Decoder's token
// stream because pipelines decode every item of every exec --json stage:
// tokens allocate per value and cost several times more.
func DecodeJSON(data []byte) (any, error) {
	d := jsonDecoder{data: data}
	d.space()
	v, ok := d.value(0)
	if ok {
		d.space()
		ok = d.pos == len(d.data)
	}
	if !ok {
		var probe any
		if err := json.Unmarshal(data, &probe); err != nil {
			return nil, err
		}
		return nil, errors.New("invalid JSON")
	}
	return v, nil
}

type jsonDecoder struct {
	data []byte
	pos  int
}

func (d *jsonDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value decodes the value at d.pos; ok is false on a syntax error.
func (d *jsonDecoder) value(depth int) (any, bool) {
	if d.pos >= len(d.data) || depth > maxJSONDepth {
		return nil, false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		s, ok := d.string()
		return s, ok
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	for _, lit := range []struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(d.data)-d.pos >= len(lit.text) && string(d.data[d.pos:d.pos+len(lit.text)]) == lit.text {
			d.pos += len(lit.text)
			return lit.v, true
		}
	}
	return nil, false
}

func (d *jsonDecoder) object(depth int) (any, bool) {
	d.pos++ // {
	o := NewObject(4)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return o, true
	}
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, false
		}
		k, ok := d.string()
		if !ok {
			return nil, false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, false
		}
		d.pos++
		d.space()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		o.Set(k, v)
		d.space()
		if d.pos >= len(d.data) {
			return nil, false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.space()
		case '}':
			d.pos++
			return o, true
		default:
			return nil, false
		}
	}
}

func (d *jsonDecoder) array(depth int) (any, bool) {
	d.pos++ // [
	a := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.space()
		if d.pos >= len(d.data) {
			return nil, false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.space()
		case ']':
			d.pos++
			return a, true
		default:
			return nil, false
		}
	}
}

// string decodes the string at d.pos. One without escapes is sliced
// directly; escapes are left to encoding/json, which knows surrogates.
func (d *jsonDecoder) string() (string, bool) {
	start := d.pos
	d.pos++
	escaped := false
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			raw := d.data[start:d.pos]
			if !escaped {
				body := raw[1 : len(raw)-1]
				if utf8.Valid(body) {
					return string(body), true
				}
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			d.pos += 2
		case c < 0x20:
			return "", false
		default:
			d.pos++
		}
	}
	return "", false
}

// number decodes the number at d.pos, checking JSON's grammar (no
// leading zeros, no bare dot) before strconv parses it.
func (d *jsonDecoder) number() (any, bool) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case d.digits() == 0:
		return nil, false
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.digits() == 0 {
			return nil, false
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.pos]), 64)
	if err != nil {
		// Out of range: JSON.parse gives ±Infinity, which JSON.stringify
		// writes as null; strconv's ±Inf becomes null the same way.
		var numErr *strconv.NumError
		if !errors.As(err, &numErr) || !errors.Is(numErr.Err, strconv.ErrRange) {
			return nil, false
		}
	}
	return f, true
}

func (d *jsonDecoder) digits() int {
	n := 0
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
		n++
	}
	return n
}
