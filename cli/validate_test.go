package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// postSocket sends body to path on the gateway socket of home and returns
// the HTTP status and the answer.
func postSocket(t *testing.T, home, path, body string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(home, "gateway.sock"))
	}}}
	resp, err := hc.Post("http://flowgate"+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// Every bad input is refused the same way through the CLI (exit 2) and
// the HTTP API (400 invalid), by the same check, with a message that
// names what was wrong. A case the CLI cannot express (it has no flag for
// it, or it resolves the value itself) has no args.
func TestBadInputRefusedByCLIAndAPI(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	startGateway(t, home)
	code, out, errOut := run(t, home, "tasks", "flow", "create", "--controller", "ctl", "--allow-unknown-controller", "--goal", "g", "--owner", "me", "--json")
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f))

	task := func(spec string) string { return `{"owner_key":"me","spec":` + spec + `}` }
	cases := []struct {
		name     string
		args     []string
		path     string
		body     string
		contains string
	}{
		{"huge retries", []string{"tasks", "run", "--retries", "100000000", "--", "true"},
			"/v1/tasks", task(`{"argv":["true"],"retry":{"max_attempts":100000001}}`), "between 0 and"},
		{"negative timeout", []string{"tasks", "run", "--timeout", "-1s", "--", "true"},
			"/v1/tasks", task(`{"argv":["true"],"timeout":"-1s"}`), "must not be negative"},
		{"relative cwd", nil,
			"/v1/tasks", task(`{"argv":["true"],"cwd":"some/dir"}`), "is relative"},
		{"empty env name", []string{"tasks", "run", "--env", "=x", "--", "true"},
			"/v1/tasks", task(`{"argv":["true"],"env":{"":"x"}}`), "NAME=value"},
		{"env name with =", nil,
			"/v1/tasks", task(`{"argv":["true"],"env":{"A=B":"x"}}`), "is not a variable name"},
		{"invalid retry regex", nil,
			"/v1/tasks", task(`{"argv":["true"],"retry":{"max_attempts":3,"transient_patterns":["(unclosed"]}}`), "is not a regular expression"},
		{"negative expected revision", []string{"tasks", "flow", "update", f.ID, "--expected-revision", "-1", "--state", `{}`},
			"/v1/flows/" + f.ID + "/update", `{"expected_revision":-1,"patch":{"state":{}}}`, "is negative"},
		{"number out of range", []string{"tasks", "flow", "create", "--controller", "ctl", "--allow-unknown-controller", "--goal", "g", "--owner", "me", "--state", `{"n":1e999}`},
			"/v1/flows", `{"owner_key":"me","controller_id":"ctl","goal":"g","state":{"n":1e999},"allow_unknown_controller":true}`, "outside the range"},
		{"unknown controller", []string{"tasks", "flow", "create", "--controller", "nosuch", "--goal", "g", "--owner", "me"},
			"/v1/flows", `{"owner_key":"me","controller_id":"nosuch","goal":"g"}`, "is not configured in the running gateway (it runs no controller plugins)"},
		{"lone surrogate", []string{"tasks", "flow", "update", f.ID, "--expected-revision", "1", "--state", `{"s":"\ud800"}`},
			"/v1/flows/" + f.ID + "/update", `{"expected_revision":1,"patch":{"state":{"s":"\ud800x"}}}`, "lone UTF-16 surrogate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.args != nil {
				code, _, errOut := run(t, home, c.args...)
				require.Equal(t, 2, code, errOut)
				if c.contains != "NAME=value" {
					require.Contains(t, errOut, c.contains)
				}
			}
			status, body := postSocket(t, home, c.path, c.body)
			require.Equal(t, http.StatusBadRequest, status, body)
			require.Contains(t, body, `"invalid"`)
			if c.contains != "NAME=value" {
				require.Contains(t, body, c.contains)
			} else {
				require.Contains(t, body, "is not a variable name")
			}
		})
	}
	code, out, _ = run(t, home, "tasks", "flow", "show", f.ID, "--json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Equal(t, int64(1), f.Revision, "no refused update changed the flow")
}
