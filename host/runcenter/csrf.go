package runcenter

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// maxForm is the largest form body the run center reads: 1 MiB.
const maxForm = 1 << 20

// csrfToken is the CSRF token of pages served to who: an HMAC of who's
// token (empty before login or without tokens) under the key made when
// the server was created. It changes when the gateway restarts.
func (s *Server) csrfToken(who caller) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("csrf\x00" + who.token))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrfValid reports whether r carries who's CSRF token, in the
// X-CSRF-Token header or the form field csrf.
func (s *Server) csrfValid(w http.ResponseWriter, r *http.Request, who caller) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		got = r.PostFormValue("csrf")
	}
	return got != "" && hmac.Equal([]byte(got), []byte(s.csrfToken(who)))
}
