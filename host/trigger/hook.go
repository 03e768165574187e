package trigger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/time/rate"

	"github.com/flowgate/flowgate/sdk"
)

// The outcomes of a delivery, as /metrics counts them.
const (
	OutcomeAccepted     = "accepted"
	OutcomeDuplicate    = "duplicate"
	OutcomeUnauthorized = "unauthorized"
	OutcomeNotFound     = "not_found"
	OutcomeTooLarge     = "too_large"
	OutcomeRateLimited  = "rate_limited"
	OutcomeInvalid      = "invalid"
	OutcomeError        = "error"
	OutcomePing         = "ping"
)

// HooksConfig configures Hooks.
type HooksConfig struct {
	Triggers *Triggers
	// Getenv reads the secrets' variables; nil is os.Getenv.
	Getenv func(string) string
	// Observe, if set, is told each delivery's trigger and outcome. The
	// trigger is "" for a name that names no enabled trigger, so what
	// strangers post cannot grow the metrics without bound.
	Observe func(trigger, outcome string)
	Logger  hclog.Logger
}

// Hooks serves POST /hooks/{name}. It is safe for concurrent use.
type Hooks struct {
	cfg HooksConfig

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewHooks returns the handler of deliveries.
func NewHooks(cfg HooksConfig) *Hooks {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string) {}
	}
	return &Hooks{cfg: cfg, buckets: map[string]*rate.Limiter{}}
}

// Answer is the JSON body of a delivery's answer.
type Answer struct {
	FlowID   string `json:"flow_id,omitempty"`
	Delivery string `json:"delivery,omitempty"`
	// Created is false when the delivery id was seen before and FlowID
	// is the flow the first delivery started.
	Created bool   `json:"created"`
	Error   string `json:"error,omitempty"`
}

// ServeHTTP checks a delivery and starts its flow. In order: the trigger
// exists and is enabled (404), the body fits (413), the signature or token
// holds (401), the trigger's bucket has a token (429: only authenticated
// deliveries spend them, so strangers cannot starve a trigger), the input
// suits the target (400). A delivery id seen before answers 200 with the
// first flow; a new one 202 once its flow is durable.
func (h *Hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	t, err := h.cfg.Triggers.Get(name)
	if errors.Is(err, sdk.ErrNotFound) || (err == nil && !t.Enabled) {
		h.answer(w, "", OutcomeNotFound, http.StatusNotFound, Answer{Error: "no enabled trigger is named " + strconv.Quote(name)})
		return
	}
	if err != nil {
		h.fail(w, name, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, t.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		h.answer(w, name, OutcomeTooLarge, http.StatusRequestEntityTooLarge,
			Answer{Error: "the body is over this trigger's " + strconv.FormatInt(t.MaxBody, 10) + " bytes; raise it with triggers add --max-body"})
		return
	}
	if err != nil {
		h.answer(w, name, OutcomeInvalid, http.StatusBadRequest, Answer{Error: "read the body: " + err.Error()})
		return
	}
	if !t.authorized(h.cfg.Getenv, body, r.Header.Get(SignatureHeader), r.Header.Get("Authorization")) {
		if m := t.Missing(h.cfg.Getenv); len(m) > 0 {
			h.cfg.Logger.Warn("trigger: refused a delivery; the gateway's environment lacks the trigger's secret", "trigger", name, "unset", m)
		}
		h.answer(w, name, OutcomeUnauthorized, http.StatusUnauthorized,
			Answer{Error: "unauthorized: sign the body (" + SignatureHeader + ") or send Authorization: Bearer TOKEN"})
		return
	}
	if r.Header.Get("X-GitHub-Event") == "ping" {
		// GitHub's test delivery when a webhook is saved: it proves the
		// secret matches and starts nothing.
		h.answer(w, name, OutcomePing, http.StatusOK, Answer{})
		return
	}
	if !h.bucket(t).Allow() {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(1/t.Rate))))
		h.answer(w, name, OutcomeRateLimited, http.StatusTooManyRequests, Answer{Error: "too many deliveries to this trigger; retry later"})
		return
	}
	input, err := deliveryInput(t, r, body)
	if err != nil {
		h.answer(w, name, OutcomeInvalid, http.StatusBadRequest, Answer{Error: err.Error()})
		return
	}
	id := deliveryID(r, body)
	f, created, err := h.cfg.Triggers.Accept(t, id, input)
	switch {
	case errors.Is(err, sdk.ErrInvalid):
		h.answer(w, name, OutcomeInvalid, http.StatusBadRequest, Answer{Delivery: id, Error: err.Error()})
	case err != nil:
		h.fail(w, name, err)
	case created:
		h.answer(w, name, OutcomeAccepted, http.StatusAccepted, Answer{FlowID: f.ID, Delivery: id, Created: true})
	default:
		h.answer(w, name, OutcomeDuplicate, http.StatusOK, Answer{FlowID: f.ID, Delivery: id})
	}
}

// deliveryInput is what the delivery gives its flow: the body, which must
// be JSON (empty is {}), or the query as an object of strings.
func deliveryInput(t Trigger, r *http.Request, body []byte) (json.RawMessage, error) {
	if t.ArgsFrom == ArgsFromQuery {
		m := map[string]string{}
		for k, v := range r.URL.Query() {
			m[k] = v[0]
		}
		return json.Marshal(m)
	}
	if len(body) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(body) {
		return nil, errors.New("the body is not valid JSON; send Content-Type: application/json (in GitHub's webhook settings, not application/x-www-form-urlencoded)")
	}
	return body, nil
}

// deliveryID names a delivery for deduplication: GitHub's
// X-GitHub-Delivery, else the sender's Idempotency-Key, else a digest of
// the query and body, so a sender that names nothing still gets one flow
// per distinct payload.
// An id over maxDeliveryID bytes is kept as its digest, so that what a
// sender puts in a header cannot make an oversized store key.
func deliveryID(r *http.Request, body []byte) string {
	for _, h := range []string{"X-GitHub-Delivery", "Idempotency-Key"} {
		if v := r.Header.Get(h); len(v) > maxDeliveryID {
			return digest([]byte(v))
		} else if v != "" {
			return v
		}
	}
	return digest([]byte(r.URL.RawQuery), []byte{0}, body)
}

// maxDeliveryID is the longest delivery id kept as sent: GitHub's are
// UUIDs, and an Idempotency-Key is usually one too.
const maxDeliveryID = 128

// digest is "sha256:" and the hex SHA-256 of parts, in order.
func digest(parts ...[]byte) string {
	d := sha256.New()
	for _, p := range parts {
		d.Write(p)
	}
	return "sha256:" + hex.EncodeToString(d.Sum(nil))
}

// bucket is t's token bucket, made afresh when its rate or burst changed.
func (h *Hooks) bucket(t Trigger) *rate.Limiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.buckets[t.Name]
	if b == nil || b.Limit() != rate.Limit(t.Rate) || b.Burst() != t.Burst {
		b = rate.NewLimiter(rate.Limit(t.Rate), t.Burst)
		h.buckets[t.Name] = b
	}
	return b
}

func (h *Hooks) fail(w http.ResponseWriter, name string, err error) {
	h.cfg.Logger.Error("trigger: a delivery failed", "trigger", name, "error", err)
	h.answer(w, name, OutcomeError, http.StatusInternalServerError, Answer{Error: "the gateway could not record the delivery; retry it"})
}

func (h *Hooks) answer(w http.ResponseWriter, name, outcome string, status int, a Answer) {
	h.cfg.Observe(name, outcome)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(a)
}
