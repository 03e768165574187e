package api

import (
	"context"

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
	AddTrigger(ctx context.Context, in trigger.Input) (trigger.Trigger, error)
	GetTrigger(ctx context.Context, name string) (trigger.Trigger, error)
	// ListTriggers lists every trigger by name.
	ListTriggers(ctx context.Context) ([]trigger.Trigger, error)
	// SetTriggerEnabled enables or disables a trigger; by names who did
	// it, for the trigger's LastToggle. A trigger already so is returned
	// unchanged.
	SetTriggerEnabled(ctx context.Context, name string, enabled bool, by string) (trigger.Trigger, error)
	// RemoveTrigger deletes a trigger and its delivery records, and
	// returns it as it was; the flows it started stay.
	RemoveTrigger(ctx context.Context, name string) (trigger.Trigger, error)
	// TriggerRuns returns up to limit accepted deliveries of a trigger,
	// newest first; limit zero means all.
	TriggerRuns(ctx context.Context, name string, limit int) ([]trigger.Run, error)
}

// triggers is the store of triggers over l's engine.
func (l *Local) triggers() *trigger.Triggers { return trigger.New(l.eng, nil) }

// AddTrigger stores a new trigger.
func (l *Local) AddTrigger(_ context.Context, in trigger.Input) (trigger.Trigger, error) {
	if err := absolutePipeline(in.Pipeline); err != nil {
		return trigger.Trigger{}, err
	}
	return l.triggers().Add(in)
}

// GetTrigger returns the trigger named name.
func (l *Local) GetTrigger(_ context.Context, name string) (trigger.Trigger, error) {
	return l.triggers().Get(name)
}

// ListTriggers lists every trigger by name.
func (l *Local) ListTriggers(context.Context) ([]trigger.Trigger, error) {
	return l.triggers().List()
}

// SetTriggerEnabled enables or disables a trigger, recording by as who
// did it.
func (l *Local) SetTriggerEnabled(_ context.Context, name string, enabled bool, by string) (trigger.Trigger, error) {
	return l.triggers().SetEnabled(name, enabled, by)
}

// RemoveTrigger deletes a trigger.
func (l *Local) RemoveTrigger(_ context.Context, name string) (trigger.Trigger, error) {
	return l.triggers().Remove(name)
}

// TriggerRuns returns a trigger's accepted deliveries, newest first.
func (l *Local) TriggerRuns(_ context.Context, name string, limit int) ([]trigger.Run, error) {
	return l.triggers().Runs(name, limit)
}
