package engine

import (
	"bytes"
	"strings"
)

// rawScan walks JSON bytes once, checking them as json.Valid does and
// noting whether json.Marshal would change them. The flow codec
// (flowcodec.go) uses it so that encoding/json's slower scanner need not
// go over a flow's state.
//
// It is stricter than json.Valid, never looser: nesting deeper than
// rawMaxDepth is refused, and callers then take encoding/json's path,
// which decides. What it accepts, json.Valid accepts.
type rawScan struct {
	b     []byte
	i     int
	depth int
	// plain stays true while no byte scanned is one json.Marshal's
	// compaction of a RawMessage changes: whitespace between tokens,
	// '<', '>', '&', or U+2028 or U+2029 (which it escapes, as HTML
	// escaping asks).
	plain bool
}

// rawMaxDepth is the deepest nesting rawScan takes; encoding/json takes
// 10000. A deeper value is not refused by the codec, only scanned by
// encoding/json instead.
const rawMaxDepth = 512

// rawValid reports whether b is one valid JSON value, and whether
// json.Marshal would write b, held in a json.RawMessage, unchanged.
func rawValid(b []byte) (valid, plain bool) {
	s := rawScan{b: b, plain: true}
	valid = s.value() && s.end()
	return valid, valid && s.plain
}

// end skips trailing whitespace and reports whether nothing follows.
func (s *rawScan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

func (s *rawScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.plain = false
		default:
			return
		}
	}
}

// value scans one value, after any whitespace, and reports whether it
// is valid.
func (s *rawScan) value() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(nil)
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

// rawMember is one member of an object: its key's bytes with their
// quotes, and the offsets of the key's opening quote, of its value's
// first byte and of the byte after its value.
type rawMember struct {
	key               []byte
	start, value, end int
}

// object scans the object at s.i; member, when not nil, is told of each
// of its members in order and returns false to stop the scan.
func (s *rawScan) object(member func(rawMember) bool) bool {
	ok, more := s.open('}')
	for ok && more {
		s.ws()
		start := s.i
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.str() {
			return false
		}
		key := s.b[start:s.i]
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		value := s.i
		if !s.value() {
			return false
		}
		if member != nil && !member(rawMember{key: key, start: start, value: value, end: s.i}) {
			return false
		}
		ok, more = s.next('}')
	}
	return ok
}

func (s *rawScan) array() bool {
	ok, more := s.open(']')
	for ok && more {
		if !s.value() {
			return false
		}
		ok, more = s.next(']')
	}
	return ok
}

// open enters the object or array whose opening byte is at s.i and
// whose closing byte is end: ok is false when it nests too deep, more
// when it holds a first member or element; an empty one is left at once.
func (s *rawScan) open(end byte) (ok, more bool) {
	if s.depth++; s.depth > rawMaxDepth {
		return false, false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == end {
		s.i++
		s.depth--
		return true, false
	}
	return true, true
}

// next reads what follows a member or an element of the object or
// array whose closing byte is end: a comma (more follows) or end (it is
// left); anything else is not valid.
func (s *rawScan) next(end byte) (ok, more bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, true
	case end:
		s.i++
		s.depth--
		return true, false
	}
	return false, false
}

// str scans the string whose opening quote is at s.i.
func (s *rawScan) str() bool {
	b := s.b
	for i := s.i + 1; i < len(b); {
		for i < len(b) && strPlain[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !hex4(b[i+2:i+6]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		case c == '<' || c == '>' || c == '&':
			s.plain = false
			i++
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			s.plain = false
			i++
		default:
			i++
		}
	}
	return false
}

// strPlain holds the bytes a string holds that need no look: all but
// the quote, the backslash, control characters, the characters
// json.Marshal escapes and 0xE2, which begins U+2028 and U+2029.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = !strings.ContainsRune(`"\<>&`, rune(c)) && c != 0xE2
	}
	return t
}()

func hex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (s *rawScan) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// number scans a number as JSON's grammar has it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *rawScan) number() bool {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return false
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		i = digits(b, i)
	}
	s.i = i
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits returns the offset of the first byte at or after i that is no
// digit.
func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}
