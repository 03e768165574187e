package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

// notifyFlags are --notify, --notify-to and --notify-template: which of
// a run's notices go where, and how they read (sdk.Flow.NotifyTo).
type notifyFlags struct {
	policy, template string
	to               []string
}

// notifySettings are what notifyFlags give, checked: the template is
// the file's text, read here so a run never depends on a file the
// gateway may not see.
type notifySettings struct {
	policy, template string
	to               []string
}

// add declares the flags on fl; what names the run ("flow", "task").
func (f *notifyFlags) add(fl *pflag.FlagSet, what string) {
	fl.StringVar(&f.policy, "notify", "", "which of the "+what+"'s notices go to --notify-to: done_only (default: one message when it ends), state_changes (one per status change) or silent (none, and no controller finish notice)")
	fl.StringArrayVar(&f.to, "notify-to", nil, "where the "+what+"'s notices go: a name from the gateway config's notify: map, a URL (slack://…, smtp://…, ntfy://…, https://…) with secrets as ${VAR} of the gateway's environment, or cmd:COMMAND (repeatable)")
	fl.StringVar(&f.template, "notify-template", "", "write chat and mail messages from this Go text/template file over the notice JSON (docs/notifications.md)")
}

// given reports whether any of the flags was set.
func (f notifyFlags) given() bool { return f.policy != "" || len(f.to) > 0 || f.template != "" }

// settings checks the flags, naming the one at fault, and reads the
// template file.
func (f notifyFlags) settings() (notifySettings, error) {
	s := notifySettings{policy: f.policy, to: f.to}
	if s.policy != "" && !slices.Contains(sdk.NotifyPolicies(), s.policy) {
		return s, usageError{fmt.Errorf("--notify %q is not a notify policy; use done_only, state_changes or silent", s.policy)}
	}
	if len(s.to) > api.MaxNotifyTo {
		return s, usageError{fmt.Errorf("--notify-to is given %d times; at most %d destinations are allowed (name a group once in the gateway config's notify: map)", len(s.to), api.MaxNotifyTo)}
	}
	for _, d := range s.to {
		if err := gateway.CheckDest(d); err != nil {
			return s, usageError{fmt.Errorf("--notify-to: %w", err)}
		}
	}
	if f.template == "" {
		return s, nil
	}
	b, err := os.ReadFile(f.template)
	if err != nil {
		return s, usageError{fmt.Errorf("--notify-template: %w", err)}
	}
	if len(b) > api.MaxNotifyTemplate {
		return s, usageError{fmt.Errorf("--notify-template %s is %d bytes; at most %d are allowed", f.template, len(b), api.MaxNotifyTemplate)}
	}
	if strings.TrimSpace(string(b)) == "" {
		return s, usageError{fmt.Errorf("--notify-template %s is empty; leave the flag out for the default message", f.template)}
	}
	if err := gateway.CheckNotifyTemplate(string(b)); err != nil {
		return s, usageError{fmt.Errorf("--notify-template %s: %w", f.template, err)}
	}
	s.template = string(b)
	return s, nil
}

// milestoneNames splits --notify-on-milestone values, each a name or a
// comma-separated list, dropping repeats.
func milestoneNames(values []string) []string {
	var out []string
	for _, v := range values {
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// flow sets the settings on a new flow.
func (s notifySettings) flow(in *apitype.CreateFlowInput) {
	in.NotifyPolicy, in.NotifyTo, in.NotifyTemplate = s.policy, s.to, s.template
}

// spec sets the settings on a detached run, whose mirrored flow takes
// them.
func (s notifySettings) spec(spec *sdk.TaskSpec) {
	spec.NotifyPolicy, spec.NotifyTo, spec.NotifyTemplate = s.policy, s.to, s.template
}
