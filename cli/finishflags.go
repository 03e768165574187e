package cli

import (
	"github.com/spf13/pflag"

	"github.com/flowgate/flowgate/sdk"
)

// finishFlags are --on-finish and --on-finish-webhook: where a run's
// finish notifications go (sdk.FinishNotify).
type finishFlags struct {
	command, webhook string
}

// add declares the flags on fl; when says when the notices are sent, as
// "when the flow ends (at least once)".
func (f *finishFlags) add(fl *pflag.FlagSet, when string) {
	fl.StringVar(&f.command, "on-finish", "", "run this /bin/sh command line "+when+", the notice as JSON on stdin")
	fl.StringVar(&f.webhook, "on-finish-webhook", "", "POST the notice to this http(s) URL "+when)
}

// notify is where the flags send the notices; nil when neither is set.
func (f finishFlags) notify() *sdk.FinishNotify {
	if f.command == "" && f.webhook == "" {
		return nil
	}
	return &sdk.FinishNotify{Command: f.command, Webhook: f.webhook}
}
