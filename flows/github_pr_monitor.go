package flows

import (
	"errors"
	"slices"
	"strings"
)

// prFields are the fields Lobster asks gh for, in its order.
const prFields = "number,title,url,state,isDraft,mergeable,reviewDecision,author,baseRefName,headRefName,updatedAt"

// summaryFields are the fields a change summary compares, in Lobster's
// order; a change of author alone is stored, and so reported as changed,
// but never listed among the changed fields.
var summaryFields = []string{"number", "title", "url", "state", "isDraft", "mergeable", "reviewDecision", "updatedAt", "baseRefName", "headRefName"}

// ErrGhNotFound is Lobster's error when there is no gh to run.
var ErrGhNotFound = errors.New("gh not found on PATH (install GitHub CLI)")

// GhFailed is Lobster's error for a gh that exited with code (a number,
// or "null" when a signal ended it): output is what gh wrote to stderr,
// or to stdout when its stderr was empty.
func GhFailed(code, output string) error {
	return errors.New("gh failed (" + code + "): " + jsTrim(output))
}

// ParseGhOutput reads what gh printed as one JSON value, as Lobster does.
func ParseGhOutput(stdout string) (any, error) {
	v, err := DecodeJSON([]byte(jsTrim(stdout)))
	if err != nil {
		return nil, errors.New("gh returned non-JSON output")
	}
	return v, nil
}

// StateChanged reports whether after differs from the state kept before
// (nil when none was kept), as Lobster compares them: as JSON with every
// object's keys sorted, so that gh printing its fields in another order
// is no change. diff.last, by contrast, compares with the keys' order.
func StateChanged(before, after any) bool {
	return Stringify(sortedKeysValue(before)) != Stringify(sortedKeysValue(after))
}

// sortedKeysValue is v with every object's keys in sorted order.
func sortedKeysValue(v any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = sortedKeysValue(e)
		}
		return out
	case *Object, map[string]any:
		o, _ := toObject(t)
		keys := slices.Sorted(slices.Values(o.Keys()))
		out := NewObject(len(keys))
		for _, k := range keys {
			e, _ := o.Get(k)
			out.Set(k, sortedKeysValue(e))
		}
		return out
	}
	return v
}

// Output is what the recipe emits, given the state kept before (nil when
// none was) and the PR's current state as gh printed it, with changed
// from StateChanged: Lobster's objects, key for key.
func (w *WorkflowRun) Output(before, current any, changed bool) (any, error) {
	prNumber := jsToNumber(w.pr)
	if w.changesOnly && !changed {
		if w.Name == PRMonitorNotifyWorkflow {
			return jsObject("kind", w.Name, "suppressed", true), nil
		}
		return jsObject("kind", w.Name, "repo", w.repo, "prNumber", prNumber, "key", w.key, "changed", false, "suppressed", true), nil
	}
	summary := prChangeSummary(before, current)
	if !w.summaryOnly {
		return jsObject("kind", w.Name, "repo", w.repo, "prNumber", prNumber, "key", w.key, "changed", changed, "summary", summary, "prSnapshot", current), nil
	}
	if current == nil {
		//lint:ignore ST1005 Lobster's message
		return nil, errors.New("Cannot read properties of null (reading 'number')")
	}
	pr := jsObject(
		"number", member(current, "number"),
		"title", member(current, "title"),
		"url", member(current, "url"),
		"state", member(current, "state"),
		"updatedAt", member(current, "updatedAt"),
	)
	if w.Name == PRMonitorWorkflow {
		return jsObject("kind", w.Name, "repo", w.repo, "prNumber", prNumber, "key", w.key, "changed", changed, "summary", summary, "pr", pr), nil
	}
	return jsObject(
		"kind", w.Name,
		"changed", changed,
		"repo", w.repo,
		"prNumber", prNumber,
		"message", prChangeMessage(jsString(w.repo)+"#"+jsNumber(prNumber), summary, pr),
		"pr", pr,
		"summary", summary,
	), nil
}

// prChangeSummary is Lobster's {changedFields, changes}: every summary
// field, from null, the first time; after that the fields whose JSON
// differs, each {from, to}. A current state that is no object or array
// has no fields.
func prChangeSummary(before, after any) *Object {
	changed := []any{}
	changes := NewObject(0)
	if isPrimitive(after) {
		return jsObject("changedFields", changed, "changes", changes)
	}
	first := isPrimitive(before)
	for _, k := range summaryFields {
		to := member(after, k)
		from := any(nil)
		if !first {
			from = member(before, k)
			if fieldJSON(from) == fieldJSON(to) {
				continue
			}
		}
		changed = append(changed, k)
		changes.Set(k, jsObject("from", from, "to", to))
	}
	return jsObject("changedFields", changed, "changes", changes)
}

// fieldJSON is JSON.stringify of a field, with a missing field told apart
// from null as JavaScript tells them apart.
func fieldJSON(v any) string {
	if v == undefined {
		return "\x00undefined"
	}
	return Stringify(v)
}

// prChangeMessage is Lobster's one-line notice: "PR updated: REPO#N:
// TITLE (FIELDS). URL", each part left out when empty, blanks collapsed.
func prChangeMessage(ref string, summary, pr *Object) string {
	var b strings.Builder
	b.WriteString("PR updated: " + ref)
	if t, _ := pr.Get("title"); truthy(t) {
		b.WriteString(": " + jsString(t))
	}
	fields, _ := summary.Get("changedFields")
	if names := fields.([]any); len(names) > 0 {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n.(string)
		}
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	b.WriteString(".")
	if u, _ := pr.Get("url"); truthy(u) {
		b.WriteString(" " + jsString(u))
	}
	return jsTrim(strings.Join(strings.FieldsFunc(b.String(), isJSSpace), " "))
}

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// isJSSpace reports whether r is white space or a line terminator to
// JavaScript (\s in a regular expression, what trim removes).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}
