package flows

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
)

// Pipeline parse errors carry Lobster's own messages (lobster-format
// §14.1), so tools that match on them keep working.
var (
	// ErrEmptyPipeline: the pipeline text is blank.
	//lint:ignore ST1005 Lobster's exact message
	ErrEmptyPipeline = errors.New("Empty pipeline")
	// ErrEmptyStage: a stage between two pipes, or before the first, is blank.
	//lint:ignore ST1005 Lobster's exact message
	ErrEmptyStage = errors.New("Empty command stage")
	// ErrUnclosedQuote: a single or double quote is never closed.
	//lint:ignore ST1005 Lobster's exact message
	ErrUnclosedQuote = errors.New("Unclosed quote")
	// ErrPositionalFlag is a flag named "_", the key of a stage's
	// positional arguments in Lobster's args object. Lobster lets it
	// replace them and then fails on the next positional token; flowgate
	// refuses it when it parses the pipeline.
	ErrPositionalFlag = errors.New(`"--_" is not a flag: "_" holds a stage's positional arguments; pass the value as a positional argument, or give the flag another name`)
)

// Stage is one command of a typed pipeline: its name, its arguments and the
// trimmed text it was parsed from. Its JSON form, {name, args, raw}, is the
// one Lobster persists in resume state.
type Stage struct {
	Name string    `json:"name"`
	Args StageArgs `json:"args"`
	Raw  string    `json:"raw"`
}

// StageArgs are a stage's arguments as Lobster parses them: named flags
// whose values are strings ("--k=v", "--k v") or true (a bare "--k"), and
// positional tokens in order. Values are never numbers; each command
// converts what it needs.
type StageArgs struct {
	// Named maps a flag name to its string value, or to true for a bare flag.
	Named map[string]any
	// Positional holds the tokens that are not flags or flag values.
	Positional []string
}

// String returns flag k's value and whether it was given with a value
// (a bare "--k" has none).
func (a StageArgs) String(k string) (string, bool) {
	s, ok := a.Named[k].(string)
	return s, ok
}

// Has reports whether flag k was given at all, bare or with a value.
// Lobster tests flags for JavaScript truthiness, so "--desc=false" is set
// (a non-empty string) and "--desc=" is not.
func (a StageArgs) Has(k string) bool {
	return truthy(a.Named[k])
}

// MarshalJSON writes Lobster's args object: the named flags, with the
// positional tokens under "_".
func (a StageArgs) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(a.Named)+1)
	maps.Copy(m, a.Named)
	pos := a.Positional
	if pos == nil {
		pos = []string{}
	}
	m["_"] = pos
	return json.Marshal(m)
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (a *StageArgs) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*a = StageArgs{Named: map[string]any{}}
	for k, v := range m {
		if k != "_" {
			a.Named[k] = v
			continue
		}
		list, _ := v.([]any)
		for _, p := range list {
			if s, ok := p.(string); ok {
				a.Positional = append(a.Positional, s)
			}
		}
	}
	return nil
}

// ParsePipeline parses a typed pipeline string, "cmd args | cmd args",
// into its stages (lobster-format §14.1). It splits on "|" outside quotes
// (a trailing "|" is ignored), tokenises each stage on spaces, tabs, CRs
// and LFs, and turns "--k=v", "--k v" and "--k" into named flags. As in
// Lobster, "--k v" takes the next token whenever it does not start with
// "--" (except exec's --json), so a value-less flag must come last or
// before another flag.
//
// It fails with ErrEmptyPipeline, ErrEmptyStage, ErrUnclosedQuote or
// ErrPositionalFlag (the stage is named).
// Command names are not checked here: an unknown command is a run-time
// error, as in Lobster.
func ParsePipeline(text string) ([]Stage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyPipeline
	}
	parts, err := splitPipes(text)
	if err != nil {
		return nil, err
	}
	stages := make([]Stage, 0, len(parts))
	for i, part := range parts {
		raw := strings.TrimSpace(part)
		if raw == "" {
			if i == len(parts)-1 && i > 0 {
				break // a trailing "|"
			}
			return nil, ErrEmptyStage
		}
		toks, err := tokenizeStage(raw)
		if err != nil {
			return nil, err
		}
		args, err := stageArgs(toks[0], toks[1:])
		if err != nil {
			return nil, fmt.Errorf("stage %q: %w", raw, err)
		}
		stages = append(stages, Stage{Name: toks[0], Args: args, Raw: raw})
	}
	return stages, nil
}

// splitPipes splits text on "|" outside quotes. Inside quotes a backslash
// protects the next character from ending the quote.
func splitPipes(text string) ([]string, error) {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '|':
			parts = append(parts, text[start:i])
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, ErrUnclosedQuote
	}
	return append(parts, text[start:]), nil
}

// tokenizeStage splits one stage into tokens with Lobster's quoting:
// single quotes are literal except \' ; double quotes unescape \" \\ \$
// and \` , drop a backslash-newline and keep other escapes verbatim. A
// quoted empty string is an (empty) token.
func tokenizeStage(s string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	inTok := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\\' && i+1 < len(s) && s[i+1] == '\'' {
				cur.WriteByte('\'')
				i++
			} else if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '\\' && i+1 < len(s) {
				switch n := s[i+1]; n {
				case '"', '\\', '$', '`':
					cur.WriteByte(n)
					i++
				case '\n':
					i++
				default:
					cur.WriteByte(c)
				}
			} else if c == '"' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inTok = c, true
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if inTok {
				toks = append(toks, cur.String())
				cur.Reset()
				inTok = false
			}
		default:
			cur.WriteByte(c)
			inTok = true
		}
	}
	if quote != 0 {
		return nil, ErrUnclosedQuote
	}
	if inTok {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

// stageArgs turns a stage's tokens after the command name into arguments.
// exec's --json never takes a value, so "exec --json cat f" runs cat (the
// current Lobster release; §20). A flag named "_" is ErrPositionalFlag.
func stageArgs(name string, toks []string) (StageArgs, error) {
	a := StageArgs{Named: map[string]any{}}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !strings.HasPrefix(t, "--") {
			a.Positional = append(a.Positional, t)
			continue
		}
		flag := t[2:]
		if k, _, _ := strings.Cut(flag, "="); k == "_" {
			return StageArgs{}, ErrPositionalFlag
		}
		if k, v, ok := strings.Cut(flag, "="); ok {
			a.Named[k] = v
			continue
		}
		if i+1 < len(toks) && !strings.HasPrefix(toks[i+1], "--") && (name != "exec" || flag != "json") {
			a.Named[flag] = toks[i+1]
			i++
			continue
		}
		a.Named[flag] = true
	}
	return a, nil
}
