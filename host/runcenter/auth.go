package runcenter

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// cookieName is the login cookie: the token, base64url-encoded.
const cookieName = "flowgate_token"

// caller is who sent a request: the name of the token it carries and the
// token itself ("" on a listener without tokens, or before login).
type caller struct {
	name  string
	token string
}

type callerKey struct{}

// callerOf returns who sent r, as Guard found it.
func callerOf(r *http.Request) caller {
	c, _ := r.Context().Value(callerKey{}).(caller)
	return c
}

// identify finds who r is from its bearer token or login cookie. ok is
// false when the run center has tokens and r carries none of them.
func (s *Server) identify(r *http.Request) (caller, bool) {
	if len(s.cfg.Tokens) == 0 {
		return caller{name: Anonymous}, true
	}
	if h := r.Header.Get("Authorization"); h != "" {
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
			return s.tokenCaller(tok)
		}
		return caller{}, false
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		if tok, err := base64.RawURLEncoding.DecodeString(ck.Value); err == nil {
			return s.tokenCaller(string(tok))
		}
	}
	return caller{}, false
}

// tokenCaller returns the caller whose token is tok, comparing with every
// token in constant time.
func (s *Server) tokenCaller(tok string) (caller, bool) {
	var found caller
	ok := false
	for _, t := range s.cfg.Tokens {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(t.Token)) == 1 {
			found, ok = caller{name: t.Name, token: t.Token}, true
		}
	}
	return found, ok
}

// public reports whether r may be served without a token: the login form
// and the static files it uses.
func public(r *http.Request) bool {
	return r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/")
}

// Guard wraps the listener's handler: it sets the security headers,
// answers 401 to a request without a valid token (the login form for a
// browser), 403 to a state-changing request without the CSRF token or
// from another origin, and passes the rest to next with who sent it.
func (s *Server) Guard(next http.Handler) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		who, ok := s.identify(r)
		if !ok && !public(r) {
			s.unauthorized(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !s.csrfValid(w, r, who) {
			http.Error(w, "403 forbidden: this request carries no valid CSRF token; reload the page and send the form again", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, who)))
	})
	return http.NewCrossOriginProtection().Handler(h)
}

// securityHeaders keeps the page from running any script but its own,
// from being framed, and from being sniffed as another type.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// unauthorized answers 401: the login form to a browser, a line saying
// what to send to anything else.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="flowgate"`)
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		s.renderLogin(w, r, http.StatusUnauthorized, "")
		return
	}
	http.Error(w, "401 unauthorized: send one of the gateway's tokens as Authorization: Bearer TOKEN "+
		"(--auth-token, http.auth_token or http.tokens), or log in at /login", http.StatusUnauthorized)
}

// login checks the token of the login form and sets the login cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	who, ok := s.tokenCaller(r.PostFormValue("token"))
	if !ok {
		s.renderLogin(w, r, http.StatusUnauthorized, "That token is not one of this gateway's tokens. Ask its operator for yours.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: base64.RawURLEncoding.EncodeToString([]byte(who.token)),
		Path: "/", HttpOnly: true, Secure: s.cfg.Secure, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout clears the login cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.cfg.Secure, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// localPath is p when it is a path on this site, else "/": a redirect
// never leaves the run center.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	return p
}
