package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Remote is a Client that talks to a running gateway over its unix socket
// (the API NewHandler serves). Errors the gateway reports come back with
// their messages verbatim and their sdk sentinels: errors.Is(err,
// sdk.ErrNotFound) works, and a revision conflict is a
// *sdk.RevisionConflictError carrying the current flow. A call that finds
// the gateway gone fails with an error wrapping ErrNoGateway: nothing was
// sent. A call whose gateway stops after the request went out fails with
// an error wrapping ErrNoAnswer: a change it asked for may or may not have
// been made; so does a call the gateway does not answer within the answer
// wait (AnswerWaitEnv), as when it is paused. Every call
// honours its context. Safe for concurrent use; make one with DialRemote
// (the zero value is not usable).
type Remote struct {
	sock string
	tr   *http.Transport
	hc   *http.Client
	// wait bounds how long a call waits for the gateway's answer.
	wait   time.Duration
	closed atomic.Bool
}

var _ Client = (*Remote)(nil)

// DialRemote connects to the gateway listening on the unix socket sockPath
// and checks, within a second, that it answers a status request. When
// nothing listens there (no socket file, or a stale one), or the gateway
// stops while it answers, it fails fast with an error wrapping
// ErrNoGateway, so a command can open the store itself instead. A
// gateway that accepts the connection but does not answer in time fails
// with another error: the store is then in use, and the
// gateway's log says why it is stuck.
//
// Before sending anything, DialRemote checks whose gateway it is: the
// socket file must be owned by the current user (or one named in
// GatewayUsersEnv) and not writable by group or others, and every
// connection's listening process must run as such a user (SO_PEERCRED).
// Otherwise it fails with an error wrapping ErrUntrustedGateway that says
// how to fix it; a command must not fall back to the store then.
func DialRemote(sockPath string) (*Remote, error) {
	if err := checkSocketPath(sockPath); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGateway, err)
	}
	wait, err := answerWait()
	if err != nil {
		return nil, err
	}
	trusted, err := trustedUIDs()
	if err != nil {
		return nil, err
	}
	if err := checkSocketFile(sockPath, trusted); err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:         dialSocket(sockPath, trusted),
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
		// A request with a body waits for the gateway to take it (see
		// heldBody), longer than any call waits for its answer.
		ExpectContinueTimeout: 2 * scanFactor * wait,
		IdleConnTimeout:       30 * time.Second,
	}
	c := &Remote{
		sock: sockPath,
		tr:   tr,
		wait: wait,
		hc: &http.Client{
			Transport: tr,
			// The API never redirects; a redirect is an error, not a
			// second request.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	// The probe asks only whether the gateway serves: a status counts
	// every record, which on a large etcd installation can outlast it.
	var alive json.RawMessage
	if err := c.call(ctx, http.MethodGet, "/healthz", nil, nil, &alive); err != nil {
		c.Close()
		switch {
		case errors.Is(err, ErrNoGateway) || errors.Is(err, ErrUntrustedGateway):
			return nil, err
		case errors.Is(err, ErrNoAnswer):
			// It stopped while it answered; a status request changes
			// nothing, so there simply is no gateway now.
			return nil, fmt.Errorf("%w: the gateway on %s stopped (%v)", ErrNoGateway, sockPath, err)
		}
		return nil, fmt.Errorf("the gateway on %s did not answer a health check (GET /healthz): %w; see the gateway's log", sockPath, err)
	}
	return c, nil
}

// dialSocket returns a dialer that connects to the unix socket path,
// whatever address the HTTP client asks for, and hands back only a
// connection whose listening process runs as a trusted user.
func dialSocket(path string, trusted map[int]bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, "unix", path)
		if err != nil && noListener(err) {
			reason := err.Error()
			if errno, ok := errors.AsType[syscall.Errno](err); ok {
				reason = errno.Error()
			}
			return nil, fmt.Errorf("%w: nothing answers on %s (%s)", ErrNoGateway, path, reason)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: connect to %s: %w", errNotConnected, path, err)
		}
		if err := checkPeer(conn, path, trusted); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// ListTasks lists tasks, newest first. An empty page has an empty, non-nil
// Tasks.
func (c *Remote) ListTasks(ctx context.Context, f apitype.TaskFilter) (apitype.TaskPage, error) {
	q := url.Values{}
	setQuery(q, "status", string(f.Status))
	setQuery(q, "runtime", f.Runtime)
	setQuery(q, "flow", f.FlowID)
	setQuery(q, "owner", f.OwnerKey)
	setQuery(q, "after", f.After)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out taskPageJSON
	if err := c.call(ctx, http.MethodGet, "/v1/tasks", q, nil, &out); err != nil {
		return apitype.TaskPage{}, err
	}
	return out.page(), nil
}

// ResolveTask finds a task by id, else by idempotency key.
func (c *Remote) ResolveTask(ctx context.Context, token string) (*stored.Task, error) {
	var out *stored.Task
	if err := c.call(ctx, http.MethodGet, "/v1/tasks/"+pathSegment(token), nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CancelTask cancels task id.
func (c *Remote) CancelTask(ctx context.Context, id string) (*stored.Task, error) {
	if id == "" {
		return nil, emptyID("task")
	}
	var out *stored.Task
	if err := c.call(ctx, http.MethodPost, "/v1/tasks/"+pathSegment(id)+"/cancel", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ViewFlows lists flows with their tasks, newest first. An empty page has
// an empty, non-nil Flows.
func (c *Remote) ViewFlows(ctx context.Context, f apitype.FlowFilter) (apitype.FlowViewPage, error) {
	q := url.Values{}
	setQuery(q, "status", string(f.Status))
	setQuery(q, "owner", f.OwnerKey)
	setQuery(q, "controller", f.ControllerID)
	setQuery(q, "chain", f.ChainID)
	setQuery(q, "mode", string(f.SyncMode))
	setQuery(q, "after", f.After)
	setFindQuery(q, f)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out flowViewPageJSON
	if err := c.call(ctx, http.MethodGet, "/v1/flows", q, nil, &out); err != nil {
		return apitype.FlowViewPage{}, err
	}
	return out.page(), nil
}

// CountFlows counts flows by status.
func (c *Remote) CountFlows(ctx context.Context) (apitype.FlowCounts, error) {
	var out apitype.FlowCounts
	if err := c.call(ctx, http.MethodGet, "/v1/flow-counts", nil, nil, &out); err != nil {
		return apitype.FlowCounts{}, err
	}
	return out, nil
}

// ViewFlow finds a flow by id, else the newest flow of an owner key, with
// its tasks.
func (c *Remote) ViewFlow(ctx context.Context, token string) (apitype.FlowView, error) {
	var out apitype.FlowView
	if err := c.call(ctx, http.MethodGet, "/v1/flows/"+pathSegment(token), nil, nil, &out); err != nil {
		return apitype.FlowView{}, err
	}
	return out, nil
}

// CreateFlow creates a managed flow. State that is not valid JSON is
// refused with ErrInvalid before anything is sent.
func (c *Remote) CreateFlow(ctx context.Context, in apitype.CreateFlowInput) (*sdk.Flow, error) {
	var out *sdk.Flow
	if err := c.call(ctx, http.MethodPost, "/v1/flows", nil, createFlowRequest(in), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateFlow applies a patch to flow id if its revision is still expected;
// a stale revision fails with *sdk.RevisionConflictError.
func (c *Remote) UpdateFlow(ctx context.Context, id string, expected int64, p apitype.FlowPatch) (*sdk.Flow, error) {
	if id == "" {
		return nil, emptyID("flow")
	}
	body := updateFlowRequest{ExpectedRevision: &expected, Patch: flowPatchJSON(p)}
	var out *sdk.Flow
	if err := c.call(ctx, http.MethodPost, "/v1/flows/"+pathSegment(id)+"/update", nil, body, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CancelFlow cancels flow id and its active tasks on behalf of by.
func (c *Remote) CancelFlow(ctx context.Context, id, by string) (apitype.CancelResult, error) {
	if id == "" {
		return apitype.CancelResult{}, emptyID("flow")
	}
	var out apitype.CancelResult
	if err := c.call(ctx, http.MethodPost, "/v1/flows/"+pathSegment(id)+"/cancel", nil, cancelFlowRequest{By: by}, &out); err != nil {
		return apitype.CancelResult{}, err
	}
	return out, nil
}

// RunTask records a queued task for the gateway's runner. created is false
// when the idempotency key named an existing task.
func (c *Remote) RunTask(ctx context.Context, in apitype.CreateTaskInput) (*stored.Task, bool, error) {
	var out runTaskResponse
	if err := c.call(ctx, http.MethodPost, "/v1/tasks", nil, runTaskRequest(in), &out); err != nil {
		return nil, false, err
	}
	return out.Task, out.Created, nil
}

// Status describes the gateway.
func (c *Remote) Status(ctx context.Context) (apitype.GatewayStatus, error) {
	var out apitype.GatewayStatus
	if err := c.call(ctx, http.MethodGet, "/v1/status", nil, nil, &out); err != nil {
		return apitype.GatewayStatus{}, err
	}
	return out, nil
}

// Plugins describes the gateway's controller plugins.
func (c *Remote) Plugins(ctx context.Context) ([]apitype.PluginStatus, error) {
	out := []apitype.PluginStatus{}
	if err := c.call(ctx, http.MethodGet, "/v1/plugins", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Close drops the client's idle connections. It is idempotent and always
// returns nil; calls after Close fail with an error wrapping net.ErrClosed.
func (c *Remote) Close() error {
	c.closed.Store(true)
	c.tr.CloseIdleConnections()
	return nil
}

// call sends one request (in as its JSON body, when not nil) and decodes a
// success answer into out, or returns the error the answer reports. The
// answer must come within the client's answer wait.
func (c *Remote) call(ctx context.Context, method, path string, q url.Values, in, out any) error {
	return c.callWithin(ctx, c.wait, method, path, q, in, out)
}

// callWithin is call with the answer awaited for up to wait: past it the
// call fails with ErrNoAnswer, since the request may have been carried out.
func (c *Remote) callWithin(ctx context.Context, wait time.Duration, method, path string, q url.Values, in, out any) error {
	if c.closed.Load() {
		return fmt.Errorf("gateway client for %s: %w", c.sock, net.ErrClosed)
	}
	var body *heldBody
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%w: encode request for %s %s: %s", sdk.ErrInvalid, method, path,
				strings.TrimPrefix(err.Error(), "json: "))
		}
		body = &heldBody{r: bytes.NewReader(b), n: int64(len(b))}
	}
	u, err := url.Parse("http://flowgate" + path)
	if err != nil {
		return fmt.Errorf("build request %s %s: %w", method, path, err)
	}
	u.RawQuery = q.Encode()
	actx, cancel := within(ctx, wait)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, method, u.String(), nil)
	if err != nil {
		return fmt.Errorf("build request %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		body.attach(req)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		err = late(actx, err)
		if body != nil && !body.taken.Load() && sent(ctx, err) {
			return fmt.Errorf("%w: the gateway on %s went away before it took %s %s (%w); nothing was sent", ErrNoGateway, c.sock, method, path, err)
		}
		if sent(ctx, err) {
			return fmt.Errorf("%w %s %s (%w)", ErrNoAnswer, method, path, err)
		}
		return fmt.Errorf("gateway request %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		err = late(actx, err)
		if sent(ctx, err) {
			return fmt.Errorf("%w %s %s (%w)", ErrNoAnswer, method, path, err)
		}
		return fmt.Errorf("read gateway answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errorFromWire(resp.StatusCode, b)
	}
	err = json.Unmarshal(b, out)
	if err == nil {
		err = checkAnswer(out)
	}
	if err != nil {
		return fmt.Errorf("gateway answer to %s %s is not what this client expects: %w; are the CLI and gateway the same version?", method, path, err)
	}
	return nil
}

// setQuery sets q[name] to v unless v is empty.
func setQuery(q url.Values, name, v string) {
	if v != "" {
		q.Set(name, v)
	}
}

// pathSegment escapes s as one path segment. A lone "." or ".." is
// escaped too, so that no router resolves it as a relative path.
func pathSegment(s string) string {
	e := url.PathEscape(s)
	if e == "." || e == ".." {
		e = strings.ReplaceAll(e, ".", "%2E")
	}
	return e
}

// emptyID is the refusal for an empty record id in a path, which HTTP
// cannot carry: the engine finds no record with that id.
func emptyID(kind string) error {
	return fmt.Errorf("%w: %s \"\" does not exist; name the %s by its id", sdk.ErrNotFound, kind, kind)
}
