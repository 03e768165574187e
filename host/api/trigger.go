package api

import (
	"context"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/trigger"
)

// Triggers is the part of Client that manages webhook triggers. A
// trigger is named by its name. Invalid input and a name in use fail
// with an error matching sdk.ErrInvalid, a name that names no trigger
// with one matching sdk.ErrNotFound.
type Triggers interface {
	// AddTrigger validates in and stores a new trigger. in.Pipeline must
	// be an absolute path: the gateway does not share the caller's working
	// directory.
	AddTrigger(ctx context.Context, in apitype.TriggerInput) (apitype.Trigger, error)
	GetTrigger(ctx context.Context, name string) (apitype.Trigger, error)
	// ListTriggers lists every trigger by name.
	ListTriggers(ctx context.Context) ([]apitype.Trigger, error)
	// SetTriggerEnabled enables or disables a trigger; by names who did
	// it, for the trigger's LastToggle. A trigger already so is returned
	// unchanged.
	SetTriggerEnabled(ctx context.Context, name string, enabled bool, by string) (apitype.Trigger, error)
	// RemoveTrigger deletes a trigger and its delivery records, and
	// returns it as it was; the flows it started stay.
	RemoveTrigger(ctx context.Context, name string) (apitype.Trigger, error)
	// TriggerRuns returns up to limit accepted deliveries of a trigger,
	// newest first; limit zero means all.
	TriggerRuns(ctx context.Context, name string, limit int) ([]apitype.TriggerRun, error)
}

// triggers is the store of triggers over l's engine, bound to ctx.
func (l *Local) triggers(ctx context.Context) *trigger.Triggers {
	return trigger.New(l.engine(ctx), nil)
}

// AddTrigger stores a new trigger.
func (l *Local) AddTrigger(ctx context.Context, in apitype.TriggerInput) (apitype.Trigger, error) {
	if err := absolutePipeline(in.Pipeline); err != nil {
		return apitype.Trigger{}, err
	}
	return triggerOrErr(l.triggers(ctx).Add(trigger.Input(in)))
}

// GetTrigger returns the trigger named name.
func (l *Local) GetTrigger(ctx context.Context, name string) (apitype.Trigger, error) {
	return triggerOrErr(l.triggers(ctx).Get(name))
}

// ListTriggers lists every trigger by name.
func (l *Local) ListTriggers(ctx context.Context) ([]apitype.Trigger, error) {
	ts, err := l.triggers(ctx).List()
	return triggersOf(ts), err
}

// SetTriggerEnabled enables or disables a trigger, recording by as who
// did it.
func (l *Local) SetTriggerEnabled(ctx context.Context, name string, enabled bool, by string) (apitype.Trigger, error) {
	return triggerOrErr(l.triggers(ctx).SetEnabled(name, enabled, by))
}

// RemoveTrigger deletes a trigger.
func (l *Local) RemoveTrigger(ctx context.Context, name string) (apitype.Trigger, error) {
	return triggerOrErr(l.triggers(ctx).Remove(name))
}

// TriggerRuns returns a trigger's accepted deliveries, newest first.
func (l *Local) TriggerRuns(ctx context.Context, name string, limit int) ([]apitype.TriggerRun, error) {
	runs, err := l.triggers(ctx).Runs(name, limit)
	return triggerRunsOf(runs), err
}
