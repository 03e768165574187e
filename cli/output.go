package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// printer writes a command's result as JSON or text, so the two never
// drift: every command builds its value once and hands it here.
type printer struct {
	w    io.Writer
	json bool
}

// emit writes v as indented JSON when --json is set, else calls text.
func (p printer) emit(v any, text func(w io.Writer)) error {
	if p.json {
		enc := json.NewEncoder(p.w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(p.w)
	return nil
}

// clean makes user text safe for a terminal: newlines and tabs become \n
// and \t, other control characters (escape sequences among them) become
// \xNN or \uNNNN, so they are visible and never act on the terminal.
func clean(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// clip cleans s and cuts it to n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	s = clean(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// orNA returns s, or "n/a" when it is empty.
func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// stamp renders a time in RFC 3339 UTC, or "n/a" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "n/a"
	}
	return t.UTC().Format(time.RFC3339)
}

// table aligns rows in columns separated by two spaces. The last column is
// not padded.
type table struct{ rows [][]string }

func (t *table) add(cols ...string) { t.rows = append(t.rows, cols) }

func (t *table) write(w io.Writer) {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// defaultListLimit is how many records tasks list and tasks flow list show
// unless --limit says otherwise: a page that prints at once however large
// the store, with a cursor to the rest.
const defaultListLimit = 100
