package flows

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
)

// whereExprRE is Lobster's where expression: a dotted path, an operator
// and a literal. Only the first positional argument is the expression, so
// "where a == 1" (three tokens) is the invalid expression "a".
var whereExprRE = regexp.MustCompile(`^([a-zA-Z0-9_.]+)\s*(==|=|!=|<=|>=|<|>)\s*(.+)$`)

var whereCommand = &Command{
	Name:        "where",
	Description: "Keep items whose field matches: where a.b==1 (==, =, !=, <, <=, >, >=; JavaScript loose comparison)",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		var expr string
		if len(call.Args.Positional) > 0 {
			expr = call.Args.Positional[0]
		}
		if expr == "" {
			return StageOutput{}, errors.New("where requires an expression (e.g. field=value)")
		}
		m := whereExprRE.FindStringSubmatch(expr)
		if m == nil {
			return StageOutput{}, errors.New("Invalid where expression: " + expr)
		}
		path, op, lit := m[1], m[2], whereLiteral(m[3])
		var out []any
		for _, item := range call.Items {
			if whereMatch(itemPath(item, path), op, lit) {
				out = append(out, item)
			}
		}
		return StageOutput{Items: out}, nil
	},
}

// whereLiteral coerces a where value as Lobster does: true, false, null
// and numbers become those values, anything else stays a string.
func whereLiteral(s string) any {
	switch s {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if strings.TrimSpace(s) != "" {
		if f := jsToNumber(s); !math.IsNaN(f) {
			return f
		}
	}
	return s
}

// whereMatch compares with JavaScript's loose operators.
func whereMatch(v any, op string, lit any) bool {
	switch op {
	case "==", "=":
		return looseEqual(v, lit)
	case "!=":
		return !looseEqual(v, lit)
	case "<":
		return jsLess(v, lit)
	case ">":
		return jsLess(lit, v)
	case "<=":
		return jsLessEqual(v, lit)
	}
	return jsLessEqual(lit, v)
}
