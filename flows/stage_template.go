package flows

import (
	"context"
	"errors"
	"os"
	"strings"
)

var templateCommand = &Command{
	Name:        "template",
	Description: "Render a {{path | filter}} template per item: template --text 'PR {{number}}: {{title | upper}}' (or --file F, or positional text)",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		tpl, _ := call.Args.String("text")
		if file, ok := call.Args.String("file"); tpl == "" && ok && file != "" {
			b, err := os.ReadFile(file)
			if err != nil {
				return StageOutput{}, errors.New("template --file: " + err.Error())
			}
			tpl = string(b)
		}
		if tpl == "" {
			tpl = strings.Join(call.Args.Positional, " ")
		}
		if tpl == "" {
			return StageOutput{}, errors.New("template requires --text or --file (or positional text)")
		}
		out := make([]any, len(call.Items))
		for i, item := range call.Items {
			s, err := renderTemplateText(tpl, item)
			if err != nil {
				return StageOutput{}, err
			}
			out[i] = s
		}
		return StageOutput{Items: out}, nil
	},
}

// renderTemplateText fills template's placeholders: a path ({{.}} and
// {{this}} are the item) and a chain of filters after "|".
func renderTemplateText(tpl string, item any) (string, error) {
	var failed error
	s := placeholderRE.ReplaceAllStringFunc(tpl, func(m string) string {
		parts := splitFilterChain(strings.TrimSpace(placeholderRE.FindStringSubmatch(m)[1]))
		v := item
		if parts[0] != "." && parts[0] != "this" {
			v = itemPath(item, parts[0])
		}
		for _, f := range parts[1:] {
			var err error
			if v, err = applyFilter(v, parseFilterExpr(f)); err != nil {
				if failed == nil {
					failed = err
				}
				return ""
			}
		}
		return placeholderText(v)
	})
	return s, failed
}

// splitFilterChain splits "path | f a | g" on "|" outside quotes; a
// backslash inside quotes keeps the next character.
func splitFilterChain(expr string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '"' || c == '\'':
			cur.WriteByte(c)
			for i++; i < len(expr) && expr[i] != c; i++ {
				if expr[i] == '\\' && i+1 < len(expr) {
					cur.WriteByte(expr[i])
					i++
				}
				cur.WriteByte(expr[i])
			}
			if i < len(expr) {
				cur.WriteByte(c)
			}
		case c == '|':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

// parseFilterExpr splits one filter, `replace "-" "_"`, into its name and
// arguments: words separated by spaces, or quoted with backslash escapes.
func parseFilterExpr(expr string) []string {
	expr = strings.TrimSpace(expr)
	var parts []string
	for i := 0; i < len(expr); {
		for i < len(expr) && expr[i] == ' ' {
			i++
		}
		if i >= len(expr) {
			break
		}
		var arg strings.Builder
		if q := expr[i]; q == '"' || q == '\'' {
			for i++; i < len(expr) && expr[i] != q; i++ {
				if expr[i] == '\\' && i+1 < len(expr) {
					i++
				}
				arg.WriteByte(expr[i])
			}
			i++ // the closing quote, if any
		} else {
			for ; i < len(expr) && expr[i] != ' '; i++ {
				arg.WriteByte(expr[i])
			}
		}
		parts = append(parts, arg.String())
	}
	if len(parts) == 0 {
		return []string{expr}
	}
	return parts
}
