package flows

import (
	"context"
	"io"
	"strings"
	"unicode/utf16"
)

var jsonCommand = &Command{
	Name:        "json",
	Description: "Render the items as a pretty JSON array",
	SideEffects: []string{},
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		items := call.Items
		if items == nil {
			items = []any{}
		}
		_, err := call.Render.Write(append(appendJSON(nil, items, "  ", ""), '\n'))
		return StageOutput{Rendered: true}, err
	},
}

var tableCommand = &Command{
	Name:        "table",
	Description: "Render the items as a table (columns: the keys of the first 20 items), or one item per line",
	SideEffects: []string{},
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		_, err := io.WriteString(call.Render, tableText(call.Items))
		return StageOutput{Rendered: true}, err
	},
}

// tableText is Lobster's table: "(no results)" for no items; for
// objects a header, a dashed rule and one row per item, columns padded to
// at least 3 and separated by two spaces; otherwise one cell per line.
func tableText(items []any) string {
	if len(items) == 0 {
		return "(no results)\n"
	}
	var b strings.Builder
	var cols []string
	seen := map[string]bool{}
	for _, it := range items[:min(20, len(items))] {
		keys, ok := objectKeys(it)
		if !ok {
			for _, it := range items {
				b.WriteString(placeholderText(it) + "\n")
			}
			return b.String()
		}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	rows := [][]string{cols}
	for _, it := range items {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = strings.ReplaceAll(placeholderText(member(it, c)), "\n", " ")
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(cols))
	for i := range cols {
		widths[i] = 3
		for _, r := range rows {
			widths[i] = max(widths[i], jsLength(r[i]))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-jsLength(c)))
		}
		b.WriteString("\n")
	}
	line(rows[0])
	rule := make([]string, len(cols))
	for i, w := range widths {
		rule[i] = strings.Repeat("-", w)
	}
	line(rule)
	for _, r := range rows[1:] {
		line(r)
	}
	return b.String()
}

// objectKeys is the keys of an object item in order (a map's sorted);
// ok is false for any other item.
func objectKeys(v any) ([]string, bool) {
	if o, ok := toObject(v); ok {
		return o.Keys(), true
	}
	return nil, false
}

// jsLength is a string's JavaScript length, in UTF-16 units.
func jsLength(s string) int {
	if isASCII(s) {
		return len(s)
	}
	return len(utf16.Encode([]rune(s)))
}
