package runcenter

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/api"
)

// Anonymous is who the run center acts as on a listener without tokens
// (only a loopback address may have none): the name a gate answer or a cancel
// made there records.
const Anonymous = "anonymous"

// Token is a named bearer token of the run center (http.tokens in the
// gateway config). Name is who a request that carries Token is: the
// approver a gate answer records and the author of a cancel.
type Token struct {
	Name  string `yaml:"name"`
	Token string `yaml:"token"`
}

// ValidateTokens names the first impossible token: an empty or repeated
// name or token, or a name with control characters or over 64 runes.
func ValidateTokens(tokens []Token) error {
	names, secrets := map[string]bool{}, map[string]bool{}
	for i, t := range tokens {
		switch {
		case t.Name == "":
			return fmt.Errorf("http.tokens[%d].name is empty: name every token; the name is who its holder answers gates as", i)
		case len([]rune(t.Name)) > 64:
			return fmt.Errorf("http.tokens[%d].name %q is longer than 64 characters", i, t.Name)
		case hasControl(t.Name):
			return fmt.Errorf("http.tokens[%d].name %q holds a control character", i, t.Name)
		case t.Token == "":
			return fmt.Errorf("http.tokens[%d] (%s) has no token: set token to a secret string", i, t.Name)
		case names[t.Name]:
			return fmt.Errorf("http.tokens: the name %q is used twice; each token needs its own name", t.Name)
		case secrets[t.Token]:
			return fmt.Errorf("http.tokens[%d] (%s) repeats another entry's token; give every name its own token", i, t.Name)
		}
		names[t.Name], secrets[t.Token] = true, true
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// Config is what a run center needs. Client is required; zero fields
// take their defaults.
type Config struct {
	// Client reads and changes the records: the gateway's in-process
	// client, the same calls the CLI makes.
	Client api.Client
	// Home is the flowgate home, where task logs are read.
	Home string
	// LogAt, when set, says where the log files of a task the gateway
	// with that member id (stored.Task.Gateway) ran are: in Home for this
	// home's gateways, in another home on this machine, or at another
	// gateway's run center; or it fails with an error that says where
	// the log is and why it cannot be read from here, which the logs page
	// shows in place of the log. If nil, every log is in Home (one
	// gateway).
	LogAt func(ctx context.Context, gateway string) (LogPlace, error)
	// Tokens are the tokens a request may carry; empty means no login,
	// and every request acts as Anonymous.
	Tokens []Token
	// Secure marks the login cookie Secure: set it when serving TLS.
	Secure bool
	// Pulse is how often a page that follows /pulse is rendered again
	// when no write woke it. With a Client that reports writes
	// (api.Changes, as the gateway's does) it bounds how late a write the
	// gateway is not told of (another gateway's, on a shared store)
	// shows; with one that does not, it is the only pace. Zero means 5s.
	Pulse time.Duration
	// Settle is the least time between two renders of a followed page,
	// so that a burst of writes draws it once. Zero means 250ms.
	Settle time.Duration
	// FlowScan bounds how many flows one page of the flow list examines
	// for its filter; zero means ScanPerPage.
	FlowScan int
	// Logger logs failed requests; nil discards.
	Logger hclog.Logger
}

// validate checks c and fills in its defaults.
func (c *Config) validate() error {
	if c.Client == nil {
		return errors.New("runcenter: Config.Client is required")
	}
	if err := ValidateTokens(c.Tokens); err != nil {
		return err
	}
	if c.Pulse <= 0 {
		c.Pulse = 5 * time.Second
	}
	if c.Settle <= 0 {
		c.Settle = 250 * time.Millisecond
	}
	if c.FlowScan <= 0 {
		c.FlowScan = ScanPerPage
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return nil
}
