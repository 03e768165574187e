package dest

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/nicholas-fedor/shoutrrr/pkg/router"
)

// Kind is what a destination spec names.
type Kind int

// The kinds of destination spec.
const (
	// KindName is a name from the gateway config's notify: map.
	KindName Kind = iota + 1
	// KindCommand is "cmd:COMMAND": the command gets the notice JSON on
	// stdin.
	KindCommand
	// KindWebhook is an http:// or https:// URL the notice JSON is
	// POSTed to.
	KindWebhook
	// KindService is a URL of a service shoutrrr knows (slack://,
	// smtp://, ntfy://, generic+https://, …), sent the rendered text.
	KindService
)

// CommandPrefix starts a command destination: "cmd:COMMAND".
const CommandPrefix = "cmd:"

// refPattern matches one ${VAR} reference to the gateway's environment.
var refPattern = regexp.MustCompile(`\$\{([^}]*)\}`)

// varName is the shape of an environment variable a ref may name.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// namePattern is the shape of a destination name in the notify: map.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// secretKeys are query keys whose values are credentials: a literal one
// in a spec given on the command line is refused, and Redact hides it.
var secretKeys = []string{"token", "password", "pass", "secret", "apikey", "api_key", "accesstoken", "access_token"}

// services lists the schemes shoutrrr sends to, sorted, for messages.
var services = func() []string {
	s := (&router.ServiceRouter{}).ListServices()
	slices.Sort(s)
	return s
}()

// KindOf is what spec names, or an error that says what is wrong with it
// and how to write it. It looks only at the spec's shape: a name is not
// looked up, and refs are not expanded.
func KindOf(spec string) (Kind, error) {
	switch {
	case strings.TrimSpace(spec) == "":
		return 0, errors.New("the destination is empty; give a name from the gateway config's notify: map, a URL such as slack://… or https://…, or cmd:COMMAND")
	case strings.HasPrefix(spec, CommandPrefix):
		if strings.TrimSpace(spec[len(CommandPrefix):]) == "" {
			return 0, errors.New("the destination cmd: has no command; write cmd:COMMAND, such as cmd:/usr/local/bin/page-me")
		}
		return KindCommand, nil
	case !strings.Contains(spec, "://"):
		if !namePattern.MatchString(spec) {
			return 0, fmt.Errorf("the destination %q is neither a URL (scheme://…), cmd:COMMAND, nor a name (letters, digits, '.', '_' and '-') from the gateway config's notify: map", spec)
		}
		return KindName, nil
	}
	scheme, _, _ := strings.Cut(spec, "://")
	scheme = strings.ToLower(scheme)
	if scheme == "http" || scheme == "https" {
		return KindWebhook, nil
	}
	base, _, _ := strings.Cut(scheme, "+")
	if !slices.Contains(services, base) {
		return 0, fmt.Errorf("the destination scheme %q is unknown; use http, https, cmd: or one of %s", scheme, strings.Join(services, ", "))
	}
	return KindService, nil
}

// Refs returns the environment variables spec's ${VAR} refs name, in
// order, or an error naming a malformed one.
func Refs(spec string) ([]string, error) {
	var out []string
	for _, m := range refPattern.FindAllStringSubmatch(spec, -1) {
		if !varName.MatchString(m[1]) {
			return nil, fmt.Errorf("%q is not a reference to an environment variable; write ${NAME} with letters, digits and '_'", m[0])
		}
		out = append(out, m[1])
	}
	if rest := refPattern.ReplaceAllString(spec, ""); strings.Contains(rest, "${") {
		return nil, errors.New("a ${ in the destination is not closed; write ${NAME}")
	}
	return out, nil
}

// Check validates spec as a user writes it on the command line, without
// the gateway's config or environment: its kind, its refs, its URL, and
// that it holds no literal secret, which would be stored as written: a
// password in a URL's userinfo, a credential query value such as token=
// or password=, or any part Redact masks (the token of a chat or push
// service's URL, as in discord://TOKEN@ID or gotify://host/TOKEN). Such a secret belongs in
// ${VAR}, a variable of the gateway's environment, or in a named
// destination in the gateway config. The error names what is wrong and
// what to write instead.
func Check(spec string) error {
	if err := checkShape(spec); err != nil {
		return err
	}
	kind, _ := KindOf(spec)
	if kind != KindWebhook && kind != KindService {
		return nil
	}
	u, _ := parseWithRefs(spec)
	if p, ok := u.User.Password(); ok && !isRef(p) && hasUserinfoSecret(u.Scheme) {
		return fmt.Errorf("the destination %s has a literal password; write it as ${VAR} (a variable of the gateway's environment) or name the destination in the gateway config's notify: map", Redact(spec))
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			if isSecretKey(k) && v != "" && !isRef(v) {
				return fmt.Errorf("the destination %s has a literal %s= value; write it as ${VAR} (a variable of the gateway's environment) or name the destination in the gateway config's notify: map", Redact(spec), k)
			}
		}
	}
	if shown := Redact(spec); strings.Contains(shown, Masked) {
		return fmt.Errorf("the destination %s holds a literal token where *** is shown; write each such part as ${VAR} (a variable of the gateway's environment) or name the destination in the gateway config's notify: map", shown)
	}
	return nil
}

// checkShape validates spec's kind, refs and URL syntax, allowing
// literal secrets (as a named destination in the config may hold).
func checkShape(spec string) error {
	kind, err := KindOf(spec)
	if err != nil {
		return err
	}
	if _, err := Refs(spec); err != nil {
		return err
	}
	if kind != KindWebhook && kind != KindService {
		return nil
	}
	u, err := parseWithRefs(spec)
	if err != nil {
		return fmt.Errorf("the destination %s is not a valid URL: %s", Redact(spec), scrubURLError(err))
	}
	if kind == KindWebhook && u.Host == "" {
		return fmt.Errorf("the destination %s has no host; write it like https://hooks.example.com/flowgate", Redact(spec))
	}
	return nil
}

// hasUserinfoSecret reports whether a URL of scheme carries a password
// in its userinfo that Check refuses when literal.
func hasUserinfoSecret(scheme string) bool {
	base, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	return base == "http" || base == "https" || base == "smtp" || base == "generic"
}

// isSecretKey reports whether query key k holds a credential.
func isSecretKey(k string) bool { return slices.Contains(secretKeys, strings.ToLower(k)) }

// isRef reports whether s, a part of a URL from parseWithRefs, is
// exactly one ref's placeholder: a secret given by reference.
func isRef(s string) bool { return s != "" && placeholder.FindString(s) == s }

// placeholder is what parseWithRefs puts in place of a ref, so that the
// URL parser (which refuses '{' in a host) sees a plain word.
var placeholder = regexp.MustCompile(`fgref[0-9]+x`)

// parseWithRefs parses spec as a URL with each ref replaced by a
// placeholder word, which restoreRefs turns back into the ref.
func parseWithRefs(spec string) (*url.URL, error) {
	i := 0
	plain := refPattern.ReplaceAllStringFunc(spec, func(string) string {
		i++
		return fmt.Sprintf("fgref%dx", i-1)
	})
	return url.Parse(plain)
}

// restoreRefs puts spec's refs back where parseWithRefs put
// placeholders in s.
func restoreRefs(spec, s string) string {
	refs := refPattern.FindAllString(spec, -1)
	return placeholder.ReplaceAllStringFunc(s, func(p string) string {
		var n int
		if _, err := fmt.Sscanf(p, "fgref%dx", &n); err != nil || n >= len(refs) {
			return p
		}
		return refs[n]
	})
}

// scrubURLError is the text of a url.Parse error without the URL it
// quotes, which may hold a secret.
func scrubURLError(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err.Error()
	}
	return "it does not parse"
}
