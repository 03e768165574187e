package runcenter

import (
	"html/template"
	"time"
)

// when draws an instant as a <time> element in UTC, with UTC in its title
// too, so that the hover still says UTC once app.js has rewritten the
// text into the viewer's own zone; with JavaScript off the UTC text
// stays. A zero time is a dash. The text is digits and punctuation only,
// so nothing in it needs escaping.
func when(t time.Time) template.HTML {
	if t.IsZero() {
		return "—"
	}
	u := t.UTC()
	return template.HTML(`<time datetime="` + u.Format(time.RFC3339) + `" title="` + u.Format("2006-01-02 15:04:05") + ` UTC">` +
		u.Format("2006-01-02 15:04:05Z") + `</time>`)
}
