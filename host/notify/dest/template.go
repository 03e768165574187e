package dest

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"
	"text/template"
)

// DefaultTemplate is the text a chat or mail destination gets when the
// notice names no template: a headline (status and goal) for a chat's
// preview and a mail's subject, then the duration, the exit code, the
// error and stderr's last lines for a failure, and the run center link.
const DefaultTemplate = `{{.Title}}
{{- with .Duration}}
Duration: {{.}}{{end}}
{{- with .ExitCode}}
Exit code: {{.}}{{end}}
{{- with .Error}}
Error: {{.}}{{end}}
{{- with .StderrTail}}
stderr:
{{- range .}}
  {{.}}{{end}}{{end}}
{{- with .URL}}
{{.}}{{end}}`

// Template is a parsed message template over a Notice. The zero value
// is not usable; use ParseTemplate.
type Template struct {
	tpl *template.Template
}

// defaultTemplate is DefaultTemplate, parsed once.
var defaultTemplate = &Template{tpl: template.Must(newTemplate().Parse(DefaultTemplate))}

// newTemplate is an empty template that refuses a missing key.
func newTemplate() *template.Template { return template.New("notice").Option("missingkey=error") }

// ParseTemplate parses text, a Go text/template over a Notice (see
// docs/notifications.md for its fields and the Title method). Empty
// text is the default template. A template that does not parse is an
// error naming the line and what is wrong.
func ParseTemplate(text string) (*Template, error) {
	if strings.TrimSpace(text) == "" {
		return defaultTemplate, nil
	}
	t, err := newTemplate().Parse(text)
	if err != nil {
		return nil, fmt.Errorf("the notify template does not parse: %w; see docs/notifications.md for the fields a template sees", err)
	}
	return &Template{tpl: t}, nil
}

// Render writes n with t. When t fails on n (a field it names does not
// exist, a function fails), the text is the default template's, and the
// error says why, for the caller to log: a message is never lost to its
// template.
func (t *Template) Render(n Notice) (string, error) {
	var b bytes.Buffer
	err := t.tpl.Execute(&b, view{n})
	if err == nil {
		return strings.TrimSpace(b.String()), nil
	}
	b.Reset()
	if derr := defaultTemplate.tpl.Execute(&b, view{n}); derr != nil {
		return n.Title(), fmt.Errorf("the notify template failed (%w), and so did the default one (%w); sent the headline only", err, derr)
	}
	return strings.TrimSpace(b.String()), fmt.Errorf("the notify template failed, so the default one was used: %w", err)
}

// view is what a template sees: the notice's fields, and Title.
type view struct{ Notice }

// Title is the notice's headline: its status and its goal (or its flow
// or task id), and the milestone or job it reports, such as
// "✅ succeeded: nightly backup". A mail's subject and a push
// notification's title.
func (n Notice) Title() string {
	what := n.Goal
	if what == "" {
		what = n.Job
	}
	if what == "" {
		what = cmp.Or(n.FlowID, n.TaskID)
	}
	head := statusMark(n.Status) + n.Status
	if n.Milestone != "" {
		head = "🏁 milestone " + n.Milestone
	}
	if what == "" {
		return head
	}
	return head + ": " + firstLine(what)
}

// statusMark is the sign a chat reader spots a status by.
func statusMark(status string) string {
	switch status {
	case "succeeded", "ok":
		return "✅ "
	case "failed", "error", "timed_out", "lost":
		return "❌ "
	case "cancelled", "aborted":
		return "⏹ "
	case "blocked", "waiting":
		return "⏸ "
	case "":
		return ""
	}
	return "▶ "
}

// firstLine is s up to its first line break, at most 200 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
