package flows

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// EvalCondition evaluates a step's when:/condition: value
// (lobster-format §6) against the results so far: nil is true, a bool is
// itself, a string is an expression. Refs in expressions are strict: an
// id without a result is an *UnknownRefError. Equality is strict (no
// coercion; arrays and objects compare deeply), < <= > >= hold only
// between numbers or numeric strings, and the result is JavaScript
// truthiness. Syntax errors read "Unsupported condition: <expr>".
func EvalCondition(when any, results map[string]StepResult) (bool, error) {
	switch w := when.(type) {
	case nil:
		return true, nil
	case bool:
		return w, nil
	case string:
		e, err := parseCondition(w)
		if err != nil {
			return false, err
		}
		v, err := e.eval(results)
		if err != nil {
			return false, err
		}
		return truthy(v), nil
	}
	//lint:ignore ST1005 the reference's exact message
	return false, errors.New("Unsupported condition type")
}

// ConditionRefs returns the step ids an expression's refs name, in order
// of appearance; nil for a bool or an unparsable expression.
func ConditionRefs(when any) []string {
	s, ok := when.(string)
	if !ok {
		return nil
	}
	e, err := parseCondition(s)
	if err != nil {
		return nil
	}
	var ids []string
	e.walk(func(n *cond) {
		if n.op == opRef {
			ids = append(ids, n.id)
		}
	})
	return ids
}

// undefined is JavaScript's undefined, kept apart from null (nil).
type undefinedT struct{}

var undefined = undefinedT{}

type condOp int

const (
	opLit condOp = iota
	opRef
	opNot
	opAnd
	opOr
	opCmp
)

// cond is a parsed condition expression node.
type cond struct {
	op    condOp
	cmp   string // for opCmp
	lit   any    // for opLit
	id    string // for opRef
	path  string // for opRef
	left  *cond
	right *cond
}

func (c *cond) walk(f func(*cond)) {
	if c == nil {
		return
	}
	f(c)
	c.left.walk(f)
	c.right.walk(f)
}

func (c *cond) eval(results map[string]StepResult) (any, error) {
	switch c.op {
	case opLit:
		return c.lit, nil
	case opRef:
		r, ok := results[c.id]
		if !ok {
			return nil, &UnknownRefError{Ref: c.id + "." + c.path}
		}
		v, found := lookupPath(r, c.path)
		if !found {
			return undefined, nil
		}
		return v, nil
	case opNot:
		v, err := c.left.eval(results)
		return !truthy(v), err
	case opAnd, opOr:
		l, err := c.left.eval(results)
		if err != nil {
			return nil, err
		}
		if truthy(l) == (c.op == opOr) {
			return c.op == opOr, nil
		}
		r, err := c.right.eval(results)
		return truthy(r), err
	}
	l, err := c.left.eval(results)
	if err != nil {
		return nil, err
	}
	r, err := c.right.eval(results)
	if err != nil {
		return nil, err
	}
	switch c.cmp {
	case "==":
		return strictEqual(l, r), nil
	case "!=":
		return !strictEqual(l, r), nil
	}
	a, aok := strictNumber(l)
	b, bok := strictNumber(r)
	if !aok || !bok {
		return false, nil
	}
	switch c.cmp {
	case "<":
		return a < b, nil
	case "<=":
		return a <= b, nil
	case ">":
		return a > b, nil
	}
	return a >= b, nil
}

func truthy(v any) bool {
	switch t := v.(type) {
	case nil, undefinedT:
		return false
	case bool:
		return t
	case float64:
		return t != 0 && !math.IsNaN(t)
	case string:
		return t != ""
	}
	return true
}

// strictEqual is Object.is for primitives and isDeepStrictEqual for arrays
// and objects.
func strictEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.IsNaN(x) && math.IsNaN(y)
		}
		return x == y && math.Signbit(x) == math.Signbit(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !strictEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.Keys() {
			w, ok := y.Get(k)
			if !ok || !strictEqual(x.vals[i], w) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !strictEqual(v, w) {
				return false
			}
		}
		return true
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	return a == b
}

var jsDecimalRE = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// strictNumber is the reference's "strictly numeric" test: a non-NaN
// number, or a non-blank string JavaScript's Number() parses.
func strictNumber(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, !math.IsNaN(t)
	case string:
		s := strings.TrimSpace(t)
		switch s {
		case "":
			return 0, false
		case "Infinity", "+Infinity":
			return math.Inf(1), true
		case "-Infinity":
			return math.Inf(-1), true
		}
		if len(s) > 2 && s[0] == '0' && strings.ContainsRune("xXoObB", rune(s[1])) {
			n, err := strconv.ParseUint(s[2:], map[byte]int{'x': 16, 'o': 8, 'b': 2}[s[1]|0x20], 64)
			return float64(n), err == nil && !strings.Contains(s, "_")
		}
		if !jsDecimalRE.MatchString(s) {
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// condition tokens
type tokKind int

const (
	tEOF tokKind = iota
	tOp
	tRef
	tStr
	tNum
	tIdent
)

type token struct {
	kind tokKind
	text string // operator, identifier, string value or number text
	id   string
	path string
}

var (
	condRefRE   = regexp.MustCompile(`^\$([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)`)
	condNumRE   = regexp.MustCompile(`^-?\d+(\.\d+)?`)
	condIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*`)
)

func tokenize(expr string) ([]token, bool) {
	var toks []token
	s := expr
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return append(toks, token{kind: tEOF}), true
		}
		if len(s) >= 2 {
			switch s[:2] {
			case "||", "&&", "==", "!=", "<=", ">=":
				toks = append(toks, token{kind: tOp, text: s[:2]})
				s = s[2:]
				continue
			}
		}
		switch c := s[0]; {
		case strings.IndexByte("!<>()", c) >= 0:
			toks = append(toks, token{kind: tOp, text: s[:1]})
			s = s[1:]
		case c == '$':
			m := condRefRE.FindStringSubmatch(s)
			if m == nil {
				return nil, false
			}
			toks = append(toks, token{kind: tRef, text: m[0], id: m[1], path: m[2]})
			s = s[len(m[0]):]
		case c == '"' || c == '\'':
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			toks = append(toks, token{kind: tStr, text: b.String()})
			s = s[i+1:]
		case condNumRE.MatchString(s):
			m := condNumRE.FindString(s)
			toks = append(toks, token{kind: tNum, text: m})
			s = s[len(m):]
		case condIdentRE.MatchString(s):
			m := condIdentRE.FindString(s)
			toks = append(toks, token{kind: tIdent, text: m})
			s = s[len(m):]
		default:
			return nil, false
		}
	}
}

type condParser struct {
	toks []token
	pos  int
	bad  bool
}

func (p *condParser) peek() token { return p.toks[p.pos] }

func (p *condParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *condParser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == s
}

// maxCondDepth bounds nesting so hostile input cannot exhaust the stack.
const maxCondDepth = 100

// parseCondition parses an expression string; "true"/"false" (trimmed)
// are literals, as true, false and null are inside any expression.
func parseCondition(expr string) (*cond, error) {
	//lint:ignore ST1005 the reference's exact message
	fail := fmt.Errorf("Unsupported condition: %s", expr)
	toks, ok := tokenize(expr)
	if !ok {
		return nil, fail
	}
	p := &condParser{toks: toks}
	c := p.or(0)
	if p.bad || p.peek().kind != tEOF {
		return nil, fail
	}
	return c, nil
}

func (p *condParser) or(depth int) *cond {
	if depth > maxCondDepth {
		p.bad = true
		return nil
	}
	c := p.and(depth)
	for !p.bad && p.isOp("||") {
		p.next()
		c = &cond{op: opOr, left: c, right: p.and(depth)}
	}
	return c
}

func (p *condParser) and(depth int) *cond {
	c := p.cmp(depth)
	for !p.bad && p.isOp("&&") {
		p.next()
		c = &cond{op: opAnd, left: c, right: p.cmp(depth)}
	}
	return c
}

func (p *condParser) cmp(depth int) *cond {
	c := p.unary(depth, false)
	t := p.peek()
	if t.kind == tOp {
		switch t.text {
		case "==", "!=", "<", "<=", ">", ">=":
			p.next()
			c = &cond{op: opCmp, cmp: t.text, left: c, right: p.unary(depth, true)}
		}
	}
	return c
}

func (p *condParser) unary(depth int, rhs bool) *cond {
	if depth > maxCondDepth {
		p.bad = true
		return nil
	}
	if p.isOp("!") {
		p.next()
		return &cond{op: opNot, left: p.unary(depth+1, rhs)}
	}
	t := p.next()
	switch t.kind {
	case tOp:
		if t.text == "(" {
			c := p.or(depth + 1)
			if !p.isOp(")") {
				p.bad = true
				return nil
			}
			p.next()
			return c
		}
	case tRef:
		return &cond{op: opRef, id: t.id, path: t.path}
	case tStr:
		return &cond{op: opLit, lit: t.text}
	case tNum:
		f, err := strconv.ParseFloat(t.text, 64)
		if err == nil {
			return &cond{op: opLit, lit: f}
		}
	case tIdent:
		switch t.text {
		case "true":
			return &cond{op: opLit, lit: true}
		case "false":
			return &cond{op: opLit, lit: false}
		case "null":
			return &cond{op: opLit, lit: nil}
		}
		if rhs {
			return &cond{op: opLit, lit: t.text}
		}
	}
	p.bad = true
	return nil
}
