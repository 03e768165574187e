package flows

import (
	"context"
	"errors"
	"regexp"
	"strings"
)

// placeholderRE finds {{ expr }} placeholders, as Lobster's map and
// template do: no "}" inside, surrounding blanks ignored.
var placeholderRE = regexp.MustCompile(`\{\{\s*([^}]+?)\s*\}\}`)

var mapCommand = &Command{
	Name:        "map",
	Description: "Transform items: map --wrap k ({k: item}), map --unwrap k (item[k]), map k=v id={{id}} (add fields)",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		wrap, _ := call.Args.String("wrap")
		unwrap, _ := call.Args.String("unwrap")
		if wrap != "" && unwrap != "" {
			return StageOutput{}, errors.New("map cannot use both --wrap and --unwrap")
		}
		type assignment struct{ key, value string }
		var assigns []assignment
		for _, tok := range call.Args.Positional {
			k, v, ok := strings.Cut(tok, "=")
			if k = strings.TrimSpace(k); ok && k != "" {
				assigns = append(assigns, assignment{k, v})
			}
		}
		out := make([]any, len(call.Items))
		for i, item := range call.Items {
			if unwrap != "" {
				out[i] = defined(member(item, unwrap))
				continue
			}
			cur := item
			if wrap != "" {
				w := NewObject(1 + len(assigns))
				w.Set(wrap, item)
				cur = w
			}
			if len(assigns) > 0 {
				obj, ok := toObject(cur)
				switch {
				case !ok:
					obj = NewObject(1 + len(assigns))
					obj.Set("value", cur)
				case wrap == "":
					// Lobster adds to the item itself; a copy keeps items an
					// earlier stage or a stored result holds unchanged.
					obj = obj.Clone()
				}
				for _, a := range assigns {
					obj.Set(a.key, renderPlaceholders(a.value, item))
				}
				cur = obj
			}
			out[i] = cur
		}
		return StageOutput{Items: out}, nil
	},
}

// renderPlaceholders fills map's {{path}} placeholders ({{.}} and
// {{this}} are the item): null and missing are empty, strings as they
// are, anything else as JSON.
func renderPlaceholders(tpl string, item any) string {
	return placeholderRE.ReplaceAllStringFunc(tpl, func(m string) string {
		key := strings.TrimSpace(placeholderRE.FindStringSubmatch(m)[1])
		v := item
		if key != "." && key != "this" {
			v = itemPath(item, key)
		}
		return placeholderText(v)
	})
}

// placeholderText is how a value appears in text: a placeholder, a
// table cell. null and missing are empty, strings are as they are,
// anything else is JSON.
func placeholderText(v any) string {
	switch t := v.(type) {
	case nil, undefinedT:
		return ""
	case string:
		return t
	}
	return renderJSON(v)
}
