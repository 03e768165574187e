package trigger

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// SignatureHeader is where GitHub puts its HMAC of the body.
const SignatureHeader = "X-Hub-Signature-256"

// Sign returns the X-Hub-Signature-256 value of body under secret, as
// GitHub computes it: "sha256=" and the hex HMAC-SHA256.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// validSignature reports whether sig is body's signature under secret.
// The compare takes the same time wherever the two differ; an empty
// secret (the gateway lacks the variable) matches nothing.
func validSignature(secret string, body []byte, sig string) bool {
	if secret == "" || sig == "" {
		return false
	}
	return hmac.Equal([]byte(Sign(secret, body)), []byte(sig))
}

// validToken reports whether the Authorization header value carries
// token as a bearer token, compared in constant time; an empty token
// matches nothing.
func validToken(token, authorization string) bool {
	got, ok := strings.CutPrefix(authorization, "Bearer ")
	if token == "" || !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// authorized reports whether a delivery to t with this body and these
// header values passes either check t has, reading the secrets through
// getenv.
func (t Trigger) authorized(getenv func(string) string, body []byte, sig, authorization string) bool {
	if t.SecretEnv != "" && validSignature(getenv(t.SecretEnv), body, sig) {
		return true
	}
	return t.TokenEnv != "" && validToken(getenv(t.TokenEnv), authorization)
}
