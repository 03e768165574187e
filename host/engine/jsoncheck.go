package engine

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checkJSON refuses bytes that are set but are not JSON every reader can
// take back: invalid JSON, invalid UTF-8, a number outside float64's
// range (1e999) or a lone UTF-16 surrogate escape ("\ud800"). Go accepts
// the last two and then writes JSON that jq and JavaScript cannot parse,
// or silently changes the value.
func checkJSON(field string, b json.RawMessage) error {
	if b == nil {
		return nil
	}
	if !json.Valid(b) || !utf8.Valid(b) {
		return invalid("%s is not valid JSON (UTF-8 text, one value)", field)
	}
	if n := outOfRange(b); n != "" {
		return invalid("%s has the number %.40s, outside the range a JSON reader can hold (about ±1.8e308); write it as a string", field, n)
	}
	if loneSurrogate(b) {
		return invalid(`%s has a lone UTF-16 surrogate escape (\ud800 to \udfff without its pair); it is no character, so remove it`, field)
	}
	return nil
}

// outOfRange returns the first number in the valid JSON b that does not
// fit a float64, or "". It scans the bytes rather than decoding tokens:
// every guarded write of a flow checks its whole state, and a token
// decoder's allocation per value was most of that write's cost. Only a
// number with an exponent or over 308 digits can overflow, so only those
// are parsed.
func outOfRange(b []byte) string {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			start, exp := i, false
			for ; i < len(b) && strings.IndexByte("+-.0123456789eE", b[i]) >= 0; i++ {
				exp = exp || b[i] == 'e' || b[i] == 'E'
			}
			if exp || i-start > 308 {
				if _, err := strconv.ParseFloat(string(b[start:i]), 64); err != nil {
					return string(b[start:i])
				}
			}
			i--
		}
	}
	return ""
}

// loneSurrogate reports whether a string in the valid JSON b has a \u
// escape of a surrogate that is not half of a high-low pair.
func loneSurrogate(b []byte) bool {
	inString, high := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		if c == '\\' && b[i+1] == 'u' {
			r, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
			i += 5
			switch {
			case r >= 0xd800 && r < 0xdc00:
				if high {
					return true
				}
				high = true
			case r >= 0xdc00 && r < 0xe000:
				if !high {
					return true
				}
				high = false
			case high:
				return true
			}
			continue
		}
		if high {
			return true
		}
		switch c {
		case '\\':
			i++
		case '"':
			inString = false
		}
	}
	return false
}
