package dest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/scheduler"
)

// Config is what a Book is built from. The zero value is a book with no
// named destinations over the process's environment.
type Config struct {
	// Named are the gateway config's notify: map: name → spec (a URL or
	// cmd:COMMAND; never another name). Being the user's own file, a
	// spec here may hold literal secrets; they are never shown.
	Named map[string]string
	// Lookup reads a variable of the gateway's environment for a ${VAR}
	// ref. If nil, os.LookupEnv.
	Lookup func(string) (string, bool)
	// Timeout bounds one send. If zero, scheduler.DefaultDeliveryTimeout.
	Timeout time.Duration
}

// Book sends messages to destinations: named ones from the gateway
// config and specs given as written. It is safe for concurrent use.
type Book struct {
	named   map[string]string
	lookup  func(string) (string, bool)
	timeout time.Duration
}

// NewBook validates c's named destinations, as the gateway does at
// start, and returns a book over them. A name of the wrong shape, a spec
// that is not a URL or command, a ref to a variable that is not set, or
// a service URL shoutrrr refuses is an error naming the key
// (notify.NAME) and never the secret.
func NewBook(c Config) (*Book, error) {
	b := &Book{named: maps.Clone(c.Named), lookup: c.Lookup, timeout: c.Timeout}
	if b.lookup == nil {
		b.lookup = os.LookupEnv
	}
	if b.timeout <= 0 {
		b.timeout = scheduler.DefaultDeliveryTimeout
	}
	if err := CheckNamed(b.named); err != nil {
		return nil, err
	}
	for _, name := range b.Names() {
		if err := b.checkNamed(name); err != nil {
			return nil, fmt.Errorf("notify.%s: %w", name, err)
		}
	}
	return b, nil
}

// CheckNamed validates the shape of named destinations (a config's
// notify: map) without the environment: each name, and each spec a URL
// or cmd:COMMAND, literal secrets allowed. The error names the key
// (notify.NAME) and never the secret.
func CheckNamed(named map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(named)) {
		if !namePattern.MatchString(name) {
			return fmt.Errorf("notify.%s: %q is not a destination name; use letters, digits, '.', '_' and '-'", name, name)
		}
		spec := named[name]
		if err := checkShape(spec); err != nil {
			return fmt.Errorf("notify.%s: %w", name, err)
		}
		if k, _ := KindOf(spec); k == KindName {
			return fmt.Errorf("notify.%s: %q names another destination; give a URL or cmd:COMMAND", name, spec)
		}
	}
	return nil
}

// checkNamed validates the named destination name against the
// environment: its refs are set, and shoutrrr takes its service URL.
func (b *Book) checkNamed(name string) error {
	r, err := b.resolve(name)
	if err != nil {
		return err
	}
	if r.kind == KindService {
		if _, err := service(r.raw); err != nil {
			return errors.New(r.scrub(err.Error()))
		}
	}
	return nil
}

// Names returns the named destinations' names, sorted.
func (b *Book) Names() []string { return slices.Sorted(maps.Keys(b.named)) }

// Shown returns the named destination name's spec as RedactAll shows
// it (its scheme and host), and whether it exists.
func (b *Book) Shown(name string) (string, bool) {
	spec, ok := b.named[name]
	return RedactAll(spec), ok
}

// Check validates spec as given on the command line (see the package
// function Check) and, for a name, that the book has it. Refs are not
// looked up: the gateway that sends may have variables this process
// has not.
func (b *Book) Check(spec string) error {
	if err := Check(spec); err != nil {
		return err
	}
	if k, _ := KindOf(spec); k == KindName {
		if _, ok := b.named[spec]; !ok {
			return b.unknown(spec)
		}
	}
	return nil
}

func (b *Book) unknown(name string) error {
	if len(b.named) == 0 {
		return fmt.Errorf("no destination is named %q: the gateway config has no notify: map; add one (notify: {%s: \"slack://…\"}) or give a URL", name, name)
	}
	return fmt.Errorf("no destination is named %q in the gateway config's notify: map; the names are %s", name, strings.Join(b.Names(), ", "))
}

// Message is one message to a destination.
type Message struct {
	// Notice is the JSON body of an http(s) or cmd: destination; its Key
	// is their Idempotency-Key and FLOWGATE_NOTICE_KEY.
	Notice Notice
	// Text is what a service destination (slack://, smtp://, …) gets;
	// its first line is the title (a mail's subject).
	Text string
	// Env is extra environment for a cmd: destination, as KEY=VALUE.
	Env []string
	// Raw, when set, is what an http(s) or cmd: destination gets instead
	// of Notice's JSON (its body, event, key, agent and environment), so
	// that a cron report keeps the body its --webhook gets.
	Raw *scheduler.Message
}

// Agent is the User-Agent of an http(s) destination's POST.
const Agent = "flowgate-notify"

// Send sends m to spec once. Its error says why it failed with every
// secret (a ref's value, a named destination's URL) masked, so it may be
// logged and stored.
func (b *Book) Send(ctx context.Context, spec string, m Message) error {
	r, err := b.resolve(spec)
	if err != nil {
		return err
	}
	switch r.kind {
	case KindCommand, KindWebhook:
		msg, err := jsonMessage(m)
		if err != nil {
			return err
		}
		d := scheduler.Delivery{Kind: scheduler.DeliveryWebhook, URL: r.raw}
		if r.kind == KindCommand {
			d = scheduler.Delivery{Kind: scheduler.DeliveryCommand, Command: strings.TrimPrefix(r.raw, CommandPrefix)}
		}
		err = scheduler.Send(ctx, d, msg, scheduler.DeliverOptions{Timeout: b.timeout})
		if err != nil {
			return errors.New(r.scrub(err.Error()))
		}
		return nil
	}
	return r.sendService(ctx, m.Text, b.timeout)
}

// jsonMessage is what an http(s) or cmd: destination gets of m: Raw,
// or the notice's JSON with its key as Idempotency-Key and
// FLOWGATE_NOTICE_KEY.
func jsonMessage(m Message) (scheduler.Message, error) {
	if m.Raw != nil {
		return *m.Raw, nil
	}
	body, err := json.Marshal(m.Notice)
	if err != nil {
		return scheduler.Message{}, fmt.Errorf("encode the notice %s: %w", m.Notice.Key, err)
	}
	env := append(slices.Clone(m.Env), "FLOWGATE_NOTICE_KEY="+m.Notice.Key, "FLOWGATE_NOTICE_EVENT="+m.Notice.Event)
	return scheduler.Message{Event: m.Notice.Event, Key: m.Notice.Key, Body: body, Agent: Agent, Env: env}, nil
}

// resolved is a spec made ready to send: its kind and its raw form (a
// name's spec, refs expanded), with what must never be shown of it.
type resolved struct {
	kind    Kind
	raw     string
	shown   string
	named   bool
	secrets []string
}

// resolve looks spec up (a name) and expands its refs from the
// environment; a ref to an unset variable is an error naming it.
func (b *Book) resolve(spec string) (resolved, error) {
	kind, err := KindOf(spec)
	if err != nil {
		return resolved{}, err
	}
	r := resolved{shown: Redact(spec)}
	label := "the destination " + r.shown
	if kind == KindName {
		named, ok := b.named[spec]
		if !ok {
			return resolved{}, b.unknown(spec)
		}
		spec = named
		if kind, err = KindOf(spec); err != nil {
			return resolved{}, errors.New(Redact(spec) + ": " + err.Error())
		}
		r.secrets, r.named = append(r.secrets, spec), true
		r.shown = "destination " + r.shown
	}
	names, err := Refs(spec)
	if err != nil {
		return resolved{}, err
	}
	for _, name := range names {
		v, ok := b.lookup(name)
		if !ok {
			return resolved{}, fmt.Errorf("%s refers to ${%s}, which is not set in the gateway's environment; set it where the gateway starts", label, name)
		}
		r.secrets = append(r.secrets, v)
	}
	r.kind = kind
	r.raw = refPattern.ReplaceAllStringFunc(spec, func(ref string) string {
		v, _ := b.lookup(ref[2 : len(ref)-1])
		return v
	})
	if kind == KindWebhook || kind == KindService {
		r.secrets = append(r.secrets, secretParts(r.raw, r.named)...)
	}
	return r, nil
}

// scrub masks r's secrets in s: its raw form and the forms the
// scheduler's delivery quotes (a URL without its password, a command
// without "cmd:") become its shown form, and each secret "***".
func (r resolved) scrub(s string) string {
	wholes := []string{r.raw, strings.TrimPrefix(r.raw, CommandPrefix)}
	if u, err := url.Parse(r.raw); err == nil && r.kind != KindCommand {
		wholes = append(wholes, u.Redacted(), u.String())
	}
	return scrub(s, r.shown, wholes, r.secrets)
}
