package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// emptyAnswers serves a gateway that answers status properly and every
// other request with 200 and body.
func emptyAnswers(t *testing.T, body string) *api.Remote {
	t.Helper()
	sock, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/status" {
			json.NewEncoder(w).Encode(api.GatewayStatus{Running: true})
			return
		}
		w.Write([]byte(body))
	}))
	c, err := api.DialRemote(sock)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// A 200 answer that lacks the record asked for is an error naming the
// request, never a nil record the caller dereferences.
func TestRemoteRefusesEmptyAnswers(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `null`} {
		c := emptyAnswers(t, body)
		ctx := context.Background()
		calls := map[string]func() error{
			"RunTask": func() error {
				_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
				return err
			},
			"ResolveTask": func() error { _, err := c.ResolveTask(ctx, "t1"); return err },
			"CancelTask":  func() error { _, err := c.CancelTask(ctx, "t1"); return err },
			"ViewFlow":    func() error { _, err := c.ViewFlow(ctx, "f1"); return err },
			"CreateFlow": func() error {
				_, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c"})
				return err
			},
			"UpdateFlow": func() error { _, err := c.UpdateFlow(ctx, "f1", 1, apitype.FlowPatch{}); return err },
			"CancelFlow": func() error { _, err := c.CancelFlow(ctx, "f1", ""); return err },
			"DecideGate": func() error { _, err := c.DecideGate(ctx, apitype.GateDecision{Flow: "f1"}); return err },
			"AddJob":     func() error { _, err := c.AddJob(ctx, apitype.CronJobInput{Name: "j"}); return err },
			"GetJob":     func() error { _, err := c.GetJob(ctx, "j"); return err },
			"RemoveJob":  func() error { _, err := c.RemoveJob(ctx, "j"); return err },
			"RunJobNow":  func() error { _, err := c.RunJobNow(ctx, "j", ""); return err },
		}
		for name, call := range calls {
			t.Run(name+" "+body, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = call() })
				require.Error(t, err)
				require.Contains(t, err.Error(), "is not what this client expects")
				require.Contains(t, err.Error(), "carries no")
			})
		}
	}
}
