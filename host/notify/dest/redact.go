package dest

import (
	"net/url"
	"slices"
	"strings"
)

// Masked is what Redact and the scrubbing of errors put in place of a
// secret.
const Masked = "***"

// Redact returns spec as it may be shown (in show output, logs, history
// and errors): ${VAR} refs kept as written, and every literal credential
// part replaced by "***": a URL's password, the lone user of a chat or
// push service's URL (a token, as in discord://TOKEN@ID), the
// path of such a URL (gotify://host/TOKEN), and credential query values
// (token=, password=, …). A name and a command are shown as written; a
// spec that does not parse is shown as its scheme only.
func Redact(spec string) string {
	kind, err := KindOf(spec)
	if err != nil && !strings.Contains(spec, "://") {
		return spec
	}
	if kind == KindName || kind == KindCommand {
		return spec
	}
	u, err := parseWithRefs(spec)
	if err != nil {
		scheme, _, _ := strings.Cut(spec, "://")
		return scheme + "://" + Masked
	}
	redactURL(u)
	return restoreRefs(spec, strings.ReplaceAll(u.String(), "%2A%2A%2A", Masked))
}

// redactURL masks the literal credential parts of u in place.
func redactURL(u *url.URL) {
	token := pathIsSecret(u.Scheme)
	if u.User != nil {
		name := u.User.Username()
		p, ok := u.User.Password()
		if token && !ok && !isRef(name) {
			name = Masked // discord://TOKEN@ID: a lone user is the token
		}
		if ok {
			if !isRef(p) {
				p = Masked
			}
			u.User = url.UserPassword(name, p)
		} else {
			u.User = url.User(name)
		}
	}
	if token && u.Path != "" && u.Path != "/" {
		segs := strings.Split(u.Path, "/")
		for i, s := range segs {
			if s != "" && !isRef(s) {
				segs[i] = Masked
			}
		}
		u.Path, u.RawPath = strings.Join(segs, "/"), ""
	}
	if u.RawQuery == "" {
		return
	}
	q, masked := u.Query(), false
	for k, vs := range q {
		for i, v := range vs {
			if isSecretKey(k) && v != "" && !isRef(v) {
				vs[i], masked = Masked, true
			}
		}
	}
	if masked {
		u.RawQuery = encodeQuery(q)
	}
}

// encodeQuery is q encoded, with "***" left readable.
func encodeQuery(q url.Values) string {
	return strings.ReplaceAll(q.Encode(), url.QueryEscape(Masked), Masked)
}

// pathIsSecret reports whether a URL of scheme carries tokens in its
// user and path: every shoutrrr service but the ones addressed like a
// web or mail server (generic, smtp, ntfy), whose path is a topic or an
// endpoint.
func pathIsSecret(scheme string) bool {
	base, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	return !slices.Contains([]string{"http", "https", "generic", "smtp", "ntfy"}, base)
}

// scrub replaces in s each of wholes (the forms of a resolved
// destination) by shown, then every secret (longest first, and each as
// it appears escaped in a URL) by "***". Parts shorter than minSecret
// are left, so that a one-letter path segment does not garble the
// message.
func scrub(s, shown string, wholes, secrets []string) string {
	for _, w := range wholes {
		if w != "" {
			s = strings.ReplaceAll(s, w, shown)
		}
	}
	var all []string
	for _, v := range secrets {
		if len(v) < minSecret {
			continue
		}
		all = append(all, v, url.QueryEscape(v), url.PathEscape(v))
	}
	slices.SortFunc(all, func(a, b string) int { return len(b) - len(a) })
	for _, v := range all {
		s = strings.ReplaceAll(s, v, Masked)
	}
	return s
}

// minSecret is the length under which scrub leaves a part alone, and
// minNamedSecret the one under which a part of a named destination's URL
// is taken for a word ("hook", "api") rather than a credential: its
// whole URL is masked anyway.
const (
	minSecret      = 3
	minNamedSecret = 8
)

// secretParts returns the literal credential parts of a resolved
// destination URL raw, to scrub from errors: the parts Redact hides, or
// with all, every part but the scheme and host (a named destination's
// URL is not shown at all).
func secretParts(raw string, all bool) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return []string{raw}
	}
	var out []string
	defer func() {
		if all {
			out = slices.DeleteFunc(out, func(s string) bool { return len(s) < minNamedSecret })
		}
	}()
	token := all || pathIsSecret(u.Scheme)
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
		if token {
			out = append(out, u.User.Username())
		}
	}
	if token {
		for s := range strings.SplitSeq(u.Path, "/") {
			out = append(out, s)
		}
	}
	for k, vs := range u.Query() {
		if all || isSecretKey(k) {
			out = append(out, vs...)
		}
	}
	return out
}

// RedactAll returns spec as a named destination's is shown: its scheme
// and host only, with every other literal part (user, path, query
// values) masked, since the whole URL is the config file's secret. A
// command is shown as "cmd:***".
func RedactAll(spec string) string {
	kind, _ := KindOf(spec)
	if kind == KindCommand {
		return CommandPrefix + Masked
	}
	u, err := parseWithRefs(spec)
	if err != nil || kind == KindName {
		return Redact(spec)
	}
	if u.User != nil {
		u.User = url.User(Masked)
	}
	if u.Path != "" && u.Path != "/" {
		u.Path, u.RawPath = "/"+Masked, ""
	}
	if u.RawQuery != "" {
		q := u.Query()
		for _, vs := range q {
			for i, v := range vs {
				if !isRef(v) {
					vs[i] = Masked
				}
			}
		}
		u.RawQuery = encodeQuery(q)
	}
	u.Fragment, u.RawFragment = "", ""
	return restoreRefs(spec, strings.ReplaceAll(u.String(), "%2A%2A%2A", Masked))
}
