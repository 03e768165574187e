package runcenter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/sdk"
)

// A gate with approver rules says on its form who may approve, and an
// approval by another token's name is refused at once, saying who may,
// with the flow still at the gate; the approver the rules name is
// accepted. The flow's page then shows the answer from the flow's
// decisions and, once the flow finished, its output.
func TestGateFormRefusesAWrongApproverAndThePageShowsWhatTheFlowProduced(t *testing.T) {
	t.Parallel()
	s := startSite(t, runcenter.Token{Name: "bob", Token: "bob-token"}, runcenter.Token{Name: "alice", Token: "alice-token"})
	ctx := context.Background()
	f, err := s.c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "release", AllowUnknownController: true})
	require.NoError(t, err)
	f, err = s.c.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{Status: sdk.FlowWaiting, State: json.RawMessage(`{}`),
		Wait: json.RawMessage(`{"kind":"approval","step":"ship","prompt":"Ship?","initiated_by":"bob","required_approver":"alice"}`)})
	require.NoError(t, err)
	require.Contains(t, s.get("/flows/"+f.ID, "bob-token"), "Only <b>alice</b> may approve.")

	approve := func(token string) (*http.Response, string) {
		form := url.Values{"csrf": {s.csrf("/gates", token)}, "flow": {f.ID}, "kind": {sdk.GateApproval}, "decision": {"approve"},
			"revision": {strconv.FormatInt(f.Revision, 10)}, "back": {"/flows/" + f.ID}}
		return s.do(http.MethodPost, "/gates/decide", token, form)
	}
	resp, body := approve("bob-token")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Contains(t, body, "Workflow step ship approval requires approver &#39;alice&#39;, got &#39;bob&#39;")
	v, err := s.c.ViewFlow(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowWaiting, v.Status, "the flow still waits at the gate")
	require.Equal(t, f.Revision, v.Revision)

	resp, body = approve("alice-token")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	v, err = s.c.ViewFlow(ctx, f.ID)
	require.NoError(t, err)
	_, err = s.c.UpdateFlow(ctx, f.ID, v.Revision, apitype.FlowPatch{Status: sdk.FlowSucceeded})
	require.NoError(t, err)
	page := s.get("/flows/"+f.ID, "alice-token")
	require.Contains(t, page, "<code>ship</code> approved <span class=\"by\">by alice</span>")
	require.NotContains(t, page, `id="output"`, "a flow finished with no output shows none")
}

// A finished flow's page shows its output from the flow's own field: the
// value indented, the text it printed, and a value kept outside the
// record named by its digest.
func TestFlowPageShowsTheOutput(t *testing.T) {
	t.Parallel()
	var held, kept string
	s := startSeeded(t, func(eng *engine.Engine) {
		for _, o := range []struct {
			id  *string
			out *sdk.Output
		}{
			{&held, &sdk.Output{Value: json.RawMessage(`{"shipped":["a<b>"]}`), Text: "a table"}},
			{&kept, &sdk.Output{File: &sdk.OutputFile{SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Kept: true}}},
		} {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "out", AllowUnknownController: true})
			require.NoError(t, err)
			_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{Output: o.out})
			require.NoError(t, err)
			*o.id = f.ID
		}
	})
	page := s.get("/flows/"+held, "")
	require.Contains(t, page, `<pre class="rendered">a table</pre>`)
	require.Contains(t, page, "<pre class=\"output\">{\n  &#34;shipped&#34;: [\n    &#34;a\\u003cb\\u003e&#34;\n  ]\n}</pre>", "indented, and no raw markup")
	page = s.get("/flows/"+kept, "")
	require.Contains(t, page, "kept outside the record as <code>9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08</code>")
}
