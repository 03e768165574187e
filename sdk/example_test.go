package sdk_test

import (
	"context"

	"github.com/flowgate/flowgate/sdk"
)

// hello finishes every flow it is given.
type hello struct{}

func (hello) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "hello", Version: "1.0.0", APIVersion: sdk.APIVersion}, nil
}

func (hello) HandleEvent(ctx context.Context, host sdk.Host, ev sdk.Event) error {
	if ev.Type != sdk.EventFlowStarted {
		return nil
	}
	f, err := host.GetFlow(ctx, ev.FlowID)
	if err != nil {
		return err
	}
	_, err = host.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{CurrentStep: "said hello"})
	return err
}

func (hello) Shutdown(context.Context) error { return nil }

// A controller plugin's whole main.
func ExampleServe() {
	sdk.Serve(hello{})
}
