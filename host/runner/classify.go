package runner

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// FailurePatterns are the regular expressions that classify a failed
// attempt of one task runtime, matched against the end of its stderr and
// stdout. A nil list keeps the default; an empty one turns it off.
type FailurePatterns struct {
	// Fatal patterns make a failure fatal: never retried. They are
	// matched against stderr only, and checked before the transient and
	// startup ones, because the text of
	// an authentication failure often holds words such as "connection"
	// that would otherwise make it look transient.
	Fatal []string `yaml:"fatal"`
	// Billing patterns make a failure billing: stop, no retry, no
	// diagnosis, and the chain is marked billing-exhausted.
	Billing []string `yaml:"billing"`
	// Transient patterns make a failure transient: retried with backoff
	// while the retry policy allows.
	Transient []string `yaml:"transient"`
	// Startup patterns make a failure that happened before the task
	// reported anything (so no child run was created) a startup
	// failure: retried once in place.
	Startup []string `yaml:"startup"`
}

// DefaultFailurePatterns are the patterns every runtime uses unless the
// gateway config replaces them. HTTP 429 alone is transient, never
// billing: a provider's quota code is what makes a failure billing.
func DefaultFailurePatterns() FailurePatterns {
	return FailurePatterns{
		Fatal: []string{
			`(?i)\b(http|status|code|error)\W{0,4}(1\.[01] )?40[13]\b`, `(?i)\b40[13] (unauthori[sz]ed|forbidden)\b`,
			`(?i)\bunauthori[sz]ed\b`, `(?i)invalid[ _-]?(api[ _-]?key|x-api-key|token|credentials)`,
			`(?i)incorrect api key`, `(?i)authentication[ _-](failed|error)`, `(?i)permission[ _-]denied`,
		},
		Billing: []string{
			`insufficient_quota`, `billing_hard_limit_reached`, `credit_balance_too_low`,
			`(?i)insufficient[ _-](credits?|balance|funds)`,
		},
		Transient: []string{
			`(?i)\b(http|status|code)\W{0,4}(1\.[01] )?429\b`, `(?i)too many requests`, `(?i)rate[ _-]?limit`,
		},
		Startup: []string{
			`(?i)no such host`, `(?i)temporary failure in name resolution`, `(?i)could not resolve host`,
			`(?i)name or service not known`, `(?i)connection refused`, `ENOTFOUND|ECONNREFUSED|EAI_AGAIN`,
		},
	}
}

// AgentFailurePatterns are the defaults of the "agent" runtime: the
// common ones, with network drops (a reset or refused connection, an
// unreachable network, a DNS or I/O timeout) transient at any point of
// the run, since an agent resumes its session after one rather than
// starting over.
func AgentFailurePatterns() FailurePatterns {
	p := DefaultFailurePatterns()
	p.Transient = append(p.Transient,
		`(?i)connection (reset|refused|closed|aborted)`, `(?i)network is (unreachable|down)`, `(?i)i/o timeout`,
		`(?i)no such host`, `(?i)temporary failure in name resolution`, `(?i)could not resolve host`,
		`ECONNRESET|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|EAI_AGAIN|ENOTFOUND`,
	)
	return p
}

// defaultPatterns is the patterns a runtime starts from.
func defaultPatterns(runtime string) FailurePatterns {
	if runtime == sdk.RuntimeAgent {
		return AgentFailurePatterns()
	}
	return DefaultFailurePatterns()
}

// compiled is FailurePatterns ready to match.
type compiled struct{ fatal, billing, transient, startup []*regexp.Regexp }

// Classifier classifies failed attempts with the default patterns, or a
// runtime's own where the gateway config gives them.
type Classifier struct {
	def       compiled
	byRuntime map[string]compiled
}

// NewClassifier compiles the defaults and the per-runtime overrides. A
// pattern that does not compile is an error naming the runtime, the kind
// and the pattern.
func NewClassifier(overrides map[string]FailurePatterns) (*Classifier, error) {
	def, err := compile("default", DefaultFailurePatterns())
	if err != nil {
		return nil, err
	}
	c := &Classifier{def: def, byRuntime: map[string]compiled{}}
	if c.byRuntime[sdk.RuntimeAgent], err = compile(sdk.RuntimeAgent, AgentFailurePatterns()); err != nil {
		return nil, err
	}
	for runtime, p := range overrides {
		d := defaultPatterns(runtime)
		if p.Fatal != nil {
			d.Fatal = p.Fatal
		}
		if p.Billing != nil {
			d.Billing = p.Billing
		}
		if p.Transient != nil {
			d.Transient = p.Transient
		}
		if p.Startup != nil {
			d.Startup = p.Startup
		}
		if c.byRuntime[runtime], err = compile(runtime, d); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func compile(runtime string, p FailurePatterns) (compiled, error) {
	var c compiled
	for _, kind := range []struct {
		name string
		in   []string
		out  *[]*regexp.Regexp
	}{{"fatal", p.Fatal, &c.fatal}, {"billing", p.Billing, &c.billing}, {"transient", p.Transient, &c.transient}, {"startup", p.Startup, &c.startup}} {
		for _, s := range kind.in {
			re, err := regexp.Compile(s)
			if err != nil {
				return c, fmt.Errorf("failure patterns of runtime %s: %s pattern %q: %w", runtime, kind.name, s, err)
			}
			*kind.out = append(*kind.out, re)
		}
	}
	return c, nil
}

// Failure is what the runner knows of a failed attempt.
type Failure struct {
	Runtime  string
	Policy   *sdk.RetryPolicy
	ExitCode int
	// Reason is the shim's reason ("timeout", "cancelled", …).
	Reason string
	// Stderr and Stdout are the ends of the attempt's output.
	Stderr, Stdout string
	// Reported says the task reported progress, a milestone or usage:
	// it got far enough to have created a child run.
	Reported bool
}

// Classify judges a failed attempt, in this order: cancelled or out of
// budget is fatal; a billing pattern in stderr or stdout is billing; exit
// codes 126 and 127, the policy's fatal patterns and the runtime's (both
// in stderr only: an agent's transcript on stdout may quote an error it
// recovered from) are fatal; exit 75,
// the policy's transient patterns and the runtime's are transient; a
// startup pattern before the task reported anything is startup; anything
// else (a mid-run disconnect included) needs diagnosis. A retry policy
// pattern that does not compile is an error naming it.
func (c *Classifier) Classify(f Failure) (sdk.FailureClass, error) {
	p, ok := c.byRuntime[f.Runtime]
	if !ok {
		p = c.def
	}
	out := f.Stderr + "\n" + f.Stdout
	switch {
	case f.Reason == "cancelled" || f.Reason == "budget-exceeded":
		return sdk.FailureFatal, nil
	case matchCompiled(p.billing, out):
		return sdk.FailureBilling, nil
	case f.ExitCode == 126 || f.ExitCode == 127 || f.Reason == "start-failed":
		return sdk.FailureFatal, nil
	}
	var fatal, transient []string
	if f.Policy != nil {
		fatal, transient = f.Policy.FatalPatterns, f.Policy.TransientPatterns
	}
	if ok, err := matchAny(fatal, f.Stderr); err != nil || ok || matchCompiled(p.fatal, f.Stderr) {
		return sdk.FailureFatal, err
	}
	if f.ExitCode == exitTempFail {
		return sdk.FailureTransient, nil
	}
	if ok, err := matchAny(transient, f.Stderr); err != nil || ok {
		return sdk.FailureTransient, err
	}
	switch {
	case matchCompiled(p.transient, out):
		return sdk.FailureTransient, nil
	case !f.Reported && matchCompiled(p.startup, out):
		return sdk.FailureStartup, nil
	}
	return sdk.FailureNeedsDiagnosis, nil
}

func matchCompiled(res []*regexp.Regexp, s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
