// Command spawner is a controller plugin for the end-to-end tests: for
// every flow it is started on (a parent), it creates a flow of its own
// under it with Host.CreateFlow, keyed by the parent, appends
// "<parent> <child> <created>" to the file $SPAWNER_LEDGER, and then
// waits $SPAWNER_HOLD before it acknowledges the event, so that a test
// can kill the gateway between the create and the acknowledgement. It
// finishes every flow it created when that flow's flow.started comes.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

type spawner struct {
	ledger string
	hold   time.Duration
}

func (spawner) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "spawner", Version: "1.0.0", APIVersion: sdk.APIVersion}, nil
}

func (spawner) Shutdown(context.Context) error { return nil }

func (s spawner) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	if ev.Type != sdk.EventFlowStarted {
		return nil
	}
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || f.Status.Terminal() {
		return err
	}
	if f.ParentFlowID != "" {
		_, err := h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{State: json.RawMessage(`{"started_seen":true}`)})
		return err
	}
	child, created, err := h.CreateFlow(ctx, sdk.FlowRequest{
		IdempotencyKey: "child-of-" + f.ID, Goal: "child of " + f.ID, OwnerKey: f.OwnerKey, ParentFlowID: f.ID,
	})
	if err != nil {
		return err
	}
	out, err := os.OpenFile(s.ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, f.ID, child.ID, created)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	select {
	case <-time.After(s.hold):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func main() {
	hold, err := time.ParseDuration(os.Getenv("SPAWNER_HOLD"))
	if err != nil {
		hold = 0
	}
	sdk.Serve(spawner{ledger: os.Getenv("SPAWNER_LEDGER"), hold: hold})
}
