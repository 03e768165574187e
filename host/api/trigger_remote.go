package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/trigger"
)

// AddTrigger stores a new trigger in the gateway.
func (c *Remote) AddTrigger(ctx context.Context, in apitype.TriggerInput) (apitype.Trigger, error) {
	var out apitype.Trigger
	if err := c.call(ctx, http.MethodPost, "/v1/triggers", nil, in, &out); err != nil {
		return apitype.Trigger{}, err
	}
	return out, nil
}

// GetTrigger returns the trigger named name.
func (c *Remote) GetTrigger(ctx context.Context, name string) (apitype.Trigger, error) {
	if name == "" {
		return apitype.Trigger{}, emptyTrigger()
	}
	var out apitype.Trigger
	if err := c.call(ctx, http.MethodGet, "/v1/triggers/"+pathSegment(name), nil, nil, &out); err != nil {
		return apitype.Trigger{}, err
	}
	return out, nil
}

// ListTriggers lists every trigger by name; an empty list is non-nil.
func (c *Remote) ListTriggers(ctx context.Context) ([]apitype.Trigger, error) {
	var out triggerListJSON
	if err := c.call(ctx, http.MethodGet, "/v1/triggers", nil, nil, &out); err != nil {
		return nil, err
	}
	if out.Triggers == nil {
		out.Triggers = []apitype.Trigger{}
	}
	return out.Triggers, nil
}

// SetTriggerEnabled enables or disables a trigger, recording by as who
// did it.
func (c *Remote) SetTriggerEnabled(ctx context.Context, name string, enabled bool, by string) (apitype.Trigger, error) {
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	return c.triggerCall(ctx, name, verb, byRequest{By: by})
}

// RemoveTrigger deletes a trigger and returns it as it was.
func (c *Remote) RemoveTrigger(ctx context.Context, name string) (apitype.Trigger, error) {
	return c.triggerCall(ctx, name, "remove", nil)
}

// TriggerRuns returns up to limit accepted deliveries, newest first.
func (c *Remote) TriggerRuns(ctx context.Context, name string, limit int) ([]apitype.TriggerRun, error) {
	if name == "" {
		return nil, emptyTrigger()
	}
	if err := checkRunsLimit(limit); err != nil {
		return nil, err
	}
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out triggerRunsJSON
	if err := c.call(ctx, http.MethodGet, "/v1/triggers/"+pathSegment(name)+"/runs", q, nil, &out); err != nil {
		return nil, err
	}
	if out.Runs == nil {
		out.Runs = []apitype.TriggerRun{}
	}
	return out.Runs, nil
}

// triggerCall posts body (nil: none) to the route verb of trigger name
// and decodes the trigger it answers with.
func (c *Remote) triggerCall(ctx context.Context, name, verb string, body any) (apitype.Trigger, error) {
	if name == "" {
		return apitype.Trigger{}, emptyTrigger()
	}
	var out apitype.Trigger
	if err := c.call(ctx, http.MethodPost, "/v1/triggers/"+pathSegment(name)+"/"+verb, nil, body, &out); err != nil {
		return apitype.Trigger{}, err
	}
	return out, nil
}

// emptyTrigger refuses an empty trigger name, which a path cannot carry.
func emptyTrigger() error {
	return fmt.Errorf("%w: give a trigger name; see triggers list", trigger.ErrNotFound)
}
