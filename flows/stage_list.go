package flows

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
)

var pickCommand = &Command{
	Name:        "pick",
	Description: "Project objects to the named fields: pick id,title (missing fields are left out; other items pass through)",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		if len(call.Args.Positional) == 0 || call.Args.Positional[0] == "" {
			return StageOutput{}, errors.New("pick requires a comma-separated field list")
		}
		var fields []string
		for f := range strings.SplitSeq(call.Args.Positional[0], ",") {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
		out := make([]any, len(call.Items))
		for i, item := range call.Items {
			if isPrimitive(item) {
				out[i] = item
				continue
			}
			picked := NewObject(len(fields))
			for _, f := range fields {
				// A field is one key, never a dotted path.
				if v := member(item, f); v != undefined {
					picked.Set(f, v)
				}
			}
			out[i] = picked
		}
		return StageOutput{Items: out}, nil
	},
}

var headCommand = &Command{
	Name:        "head",
	Description: "Keep the first N items: head --n 5 (default 10)",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		n := 10.0
		if v, ok := call.Args.Named["n"]; ok {
			n = jsToNumber(v) // a bare --n is 1, as in JavaScript
		}
		if math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
			return StageOutput{}, errors.New("head --n must be a non-negative number")
		}
		// Lobster takes items while their index is below n, so 2.5 keeps 3.
		keep := min(int(math.Ceil(min(n, float64(len(call.Items))))), len(call.Items))
		return StageOutput{Items: call.Items[:keep]}, nil
	},
}

var sortCommand = &Command{
	Name:        "sort",
	Description: "Sort items, stably: sort [--key a.b] [--desc] (numbers numerically, other values as strings, null and missing last)",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		key, _ := call.Args.String("key")
		sign := 1
		if call.Args.Has("desc") {
			// Lobster negates the comparison, so under --desc null and
			// missing keys come first; equal keys keep their order.
			sign = -1
		}
		// Each item's key is read once, not at every comparison.
		type keyed struct{ key, item any }
		ks := make([]keyed, len(call.Items))
		for i, it := range call.Items {
			ks[i] = keyed{itemPath(it, key), it}
		}
		slices.SortStableFunc(ks, func(a, b keyed) int {
			return sign * sortCompare(a.key, b.key)
		})
		out := make([]any, len(ks))
		for i, k := range ks {
			out[i] = k.item
		}
		return StageOutput{Items: out}, nil
	},
}

// sortCompare orders sort keys: null and undefined after everything else,
// two numbers numerically, anything else by its string form.
func sortCompare(a, b any) int {
	an := a == nil || a == undefined
	bn := b == nil || b == undefined
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	x, xok := a.(float64)
	y, yok := b.(float64)
	if xok && yok {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return compareUTF16(jsString(a), jsString(b))
}

var dedupeCommand = &Command{
	Name:        "dedupe",
	Description: "Drop repeated items, keeping the first: dedupe [--key a.b] (identity is the JSON text)",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		key, _ := call.Args.String("key")
		seen := map[string]bool{}
		var out []any
		for _, item := range call.Items {
			id := identity(itemPath(item, key))
			if !seen[id] {
				seen[id] = true
				out = append(out, item)
			}
		}
		return StageOutput{Items: out}, nil
	},
}

// identity is JSON.stringify(v) as a map key; undefined has its own.
func identity(v any) string {
	if v == undefined {
		return "undefined"
	}
	return renderJSON(v)
}

var groupByCommand = &Command{
	Name:        "groupBy",
	Description: "Group items by a field: groupBy --key a.b → {key, items, count} in order of first appearance",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		var key string
		if v, ok := call.Args.Named["key"]; ok {
			key = strings.TrimSpace(jsString(v)) // a bare --key is the path "true"
		}
		if key == "" {
			return StageOutput{}, errors.New("groupBy requires --key")
		}
		type group struct {
			key   any
			items []any
		}
		index := map[string]int{}
		var groups []group
		for _, item := range call.Items {
			v := itemPath(item, key)
			id := identity(v)
			i, ok := index[id]
			if !ok {
				i, index[id] = len(groups), len(groups)
				groups = append(groups, group{key: v})
			}
			groups[i].items = append(groups[i].items, item)
		}
		out := make([]any, len(groups))
		for i, g := range groups {
			obj := NewObject(3)
			if g.key != undefined {
				obj.Set("key", g.key) // JSON.stringify leaves an undefined key out
			}
			obj.Set("items", g.items)
			obj.Set("count", float64(len(g.items)))
			out[i] = obj
		}
		return StageOutput{Items: out}, nil
	},
}
