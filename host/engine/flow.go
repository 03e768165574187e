package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// CreateFlowInput describes a new flow. OwnerKey and Goal are required;
// ControllerID is required for a managed flow.
type CreateFlowInput struct {
	// SyncMode defaults to managed. Mirrored flows are made by CreateTask,
	// never directly.
	SyncMode     sdk.SyncMode
	OwnerKey     string
	ControllerID string
	Goal         string
	CurrentStep  string
	// State is the initial JSON state; nil leaves it absent.
	State json.RawMessage
	// NotifyPolicy defaults to done_only. NotifyTo and NotifyTemplate
	// are where its notices go and how they read (see sdk.Flow).
	NotifyPolicy   string
	NotifyTo       []string
	NotifyTemplate string
	Origin         string
	// Budget is the soft usage budget of the flow's chain; nil means none.
	Budget *sdk.Budget
	// OnFinish is where the flow's finish notification goes; nil is
	// nowhere (see sdk.Flow.OnFinish).
	OnFinish *sdk.FinishNotify
	// AllowUnknownController lets a running gateway create the flow even
	// though it runs no plugin named ControllerID (one is to be added to
	// its config later); without it the gateway refuses. The engine
	// itself does not look at it: with no gateway, nothing is known.
	AllowUnknownController bool
}

func (in *CreateFlowInput) normalize() error {
	in.OwnerKey = strings.TrimSpace(in.OwnerKey)
	in.ControllerID = strings.TrimSpace(in.ControllerID)
	in.Goal = strings.TrimSpace(in.Goal)
	in.CurrentStep = strings.TrimSpace(in.CurrentStep)
	if in.SyncMode == "" {
		in.SyncMode = sdk.SyncManaged
	}
	if in.SyncMode != sdk.SyncManaged {
		return invalid("flows are created managed; a task_mirrored flow is made by creating a task without a flow")
	}
	if in.OwnerKey == "" {
		return invalid("owner key is required (--owner)")
	}
	if in.ControllerID == "" {
		return invalid("a managed flow needs a controller id (--controller)")
	}
	if in.Goal == "" {
		return invalid("goal is required (--goal)")
	}
	if err := checkKeyParts(map[string]string{"owner key": in.OwnerKey, "controller id": in.ControllerID}); err != nil {
		return err
	}
	if err := checkJSON("state", in.State); err != nil {
		return err
	}
	if err := checkBudget(in.Budget); err != nil {
		return err
	}
	if err := ValidateNotify(in.OnFinish); err != nil {
		return err
	}
	if in.NotifyPolicy == "" {
		in.NotifyPolicy = sdk.NotifyDoneOnly
	}
	return checkNotifySettings(in.NotifyPolicy, in.NotifyTo, in.NotifyTemplate)
}

// maxKeyPart bounds an owner key, controller id or idempotency key: they
// become parts of index keys, which the store caps.
const maxKeyPart = 512

// checkKeyParts refuses identifiers too long to index.
func checkKeyParts(parts map[string]string) error {
	for name, v := range parts {
		if len(v) > maxKeyPart {
			return invalid("%s is %d bytes long; at most %d are allowed", name, len(v), maxKeyPart)
		}
	}
	return nil
}

// CreateFlow stores a new managed flow in status queued at revision 1 and
// queues a flow.started event for its controller, in one transaction.
func (e *Engine) CreateFlow(in CreateFlowInput) (*sdk.Flow, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	var out *sdk.Flow
	err := e.write(func(t *txn) (err error) {
		out, err = e.createFlow(t, in, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// createFlow is CreateFlow's write, in transaction t, of the flow in
// describes (normalized); with is applied to the record before it is
// saved, when not nil.
func (e *Engine) createFlow(t *txn, in CreateFlowInput, with func(*sdk.Flow)) (*sdk.Flow, error) {
	id, err := e.ids.next(t.now)
	if err != nil {
		return nil, err
	}
	f := &sdk.Flow{
		ID: id, SyncMode: in.SyncMode, OwnerKey: in.OwnerKey, ControllerID: in.ControllerID,
		Status: sdk.FlowQueued, Goal: in.Goal, CurrentStep: in.CurrentStep,
		State: in.State, NotifyPolicy: in.NotifyPolicy, Origin: in.Origin,
		CreatedAt: t.now, ChainID: id, OnFinish: in.OnFinish,
		NotifyTo: in.NotifyTo, NotifyTemplate: in.NotifyTemplate,
	}
	if with != nil {
		with(f)
	}
	if err := t.saveFlow(nil, f); err != nil {
		return nil, err
	}
	if err := t.setChainBudget(f, in.Budget); err != nil {
		return nil, err
	}
	return f, t.appendEvent(f, sdk.EventFlowStarted, "", nil)
}

// GetFlow returns the flow with this id, or an ErrNotFound error.
func (e *Engine) GetFlow(id string) (*sdk.Flow, error) {
	var f *sdk.Flow
	err := e.view(func(tx store.ReadTx) error {
		var err error
		f, err = loadFlow(tx, id)
		return err
	})
	return f, err
}

// ResolveFlow finds a flow by id, else the newest flow of the owner key
// token. It returns an ErrNotFound error when neither matches.
func (e *Engine) ResolveFlow(token string) (*sdk.Flow, error) {
	var f *sdk.Flow
	err := e.view(func(tx store.ReadTx) error {
		var err error
		f, err = resolveFlow(tx, token)
		return err
	})
	return f, err
}

func resolveFlow(tx store.ReadTx, token string) (*sdk.Flow, error) {
	it, err := resolveFlowItem(tx, token)
	if err != nil {
		return nil, err
	}
	return decodeRecord[sdk.Flow](it)
}

// FlowRevision returns the revision of the flow ResolveFlow finds for
// token, with its errors, without decoding the flow's record: a
// follower waiting for a flow to change (the API's wait) compares it at
// every write to the store, and the record, its state included, is most
// of the cost of a read.
func (e *Engine) FlowRevision(token string) (int64, error) {
	var rev int64
	err := e.view(func(tx store.ReadTx) error {
		it, err := resolveFlowItem(tx, token)
		rev = it.Revision
		return err
	})
	return rev, err
}

// resolveFlowItem is the stored item of the flow resolveFlow finds.
func resolveFlowItem(tx store.ReadTx, token string) (store.Item, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return store.Item{}, invalid("flow id or owner key is empty")
	}
	if it, err := flowItem(tx, token); !errors.Is(err, sdk.ErrNotFound) {
		return it, err
	}
	var id string
	if err := tx.Scan(idxFlowOwner+esc(token)+"/", store.ScanOptions{Reverse: true, Limit: 1}, func(it store.Item) bool {
		id = lastSegment(it.Key)
		return false
	}); err != nil {
		return store.Item{}, err
	}
	if id == "" {
		return store.Item{}, fmt.Errorf("%w: no flow has id or owner key %q; list flows with flowgate tasks flow list", sdk.ErrNotFound, token)
	}
	return flowItem(tx, id)
}

// FlowFilter selects flows for ListFlows. The zero value selects all.
type FlowFilter struct {
	Status       sdk.FlowStatus
	OwnerKey     string
	ControllerID string
	SyncMode     sdk.SyncMode
	// ChainID selects the runs of one chain (see sdk.Flow.Chain).
	ChainID string
	// Search, when set, selects flows whose goal, owner key or a label
	// key or value holds it, ignoring case (see flowsearch.go).
	Search string
	// Since and Until, when set, bound the flows' creation time, both
	// included; Until also starts the scan there, so older ranges cost
	// no more than newer ones.
	Since, Until time.Time
	// Scan bounds how many flows one page examines; zero is no bound. A
	// page that reaches it before it is full ends early with a Next
	// cursor, so a search that matches few flows costs at most Scan reads
	// a page instead of reading the whole store.
	Scan int
	// After is the cursor: list flows older than this flow id.
	After string
	// Limit caps the page; zero means no limit.
	Limit int
}

// FlowPage is one page of flows, newest first. Next is the cursor for the
// following page, empty on the last page. Damaged lists the records the
// listing skipped because they cannot be read (see DamagedRecord).
type FlowPage struct {
	Flows   []*sdk.Flow
	Next    string
	Damaged []DamagedRecord
}

// ListFlows returns flows matching f, newest first.
func (e *Engine) ListFlows(f FlowFilter) (FlowPage, error) {
	q, err := f.query()
	if err != nil {
		return FlowPage{}, err
	}
	var page FlowPage
	err = e.view(func(tx store.ReadTx) error {
		var err error
		page.Flows, page.Next, page.Damaged, err = q.run(tx)
		return err
	})
	return page, err
}

// query checks f and returns the listing that answers it.
func (f FlowFilter) query() (listQuery[sdk.Flow], error) {
	if f.Status != "" && !f.Status.Valid() {
		_, err := sdk.ParseFlowStatus(string(f.Status))
		return listQuery[sdk.Flow]{}, err
	}
	if f.SyncMode != "" {
		if _, err := sdk.ParseSyncMode(string(f.SyncMode)); err != nil {
			return listQuery[sdk.Flow]{}, err
		}
	}
	if err := f.checkFind(); err != nil {
		return listQuery[sdk.Flow]{}, err
	}
	prefix := flowPrefix
	switch {
	case f.Status != "":
		prefix = idxFlowStatus + string(f.Status) + "/"
	case f.OwnerKey != "":
		prefix = idxFlowOwner + esc(f.OwnerKey) + "/"
	case f.ControllerID != "":
		prefix = idxFlowController + esc(f.ControllerID) + "/"
	}
	return listQuery[sdk.Flow]{prefix: prefix, records: flowPrefix, after: f.start(), limit: f.Limit, scan: f.Scan,
		older: f.older(), match: f.match, id: func(fl *sdk.Flow) string { return fl.ID }}, nil
}

func (f FlowFilter) match(fl *sdk.Flow) bool {
	return (f.Status == "" || fl.Status == f.Status) &&
		(f.OwnerKey == "" || fl.OwnerKey == f.OwnerKey) &&
		(f.ControllerID == "" || fl.ControllerID == f.ControllerID) &&
		(f.SyncMode == "" || fl.SyncMode == f.SyncMode) &&
		(f.ChainID == "" || fl.Chain() == f.ChainID) &&
		f.found(fl)
}

// FlowCounts counts flows by status and how many non-terminal flows carry a
// cancel request, from the indexes.
type FlowCounts struct {
	Total           int                    `json:"total"`
	ByStatus        map[sdk.FlowStatus]int `json:"by_status"`
	CancelRequested int                    `json:"cancel_requested"`
}

// cancelKey is how a flow record that carries a cancel request names it;
// a record without it (the field is omitted when zero) carries none.
var cancelKey = []byte(`"cancel_requested_at"`)

// CountFlows counts every flow by status. An active flow's record is
// decoded only when it holds cancelKey, so that counting a store of many
// active flows stays cheap (the run center's flow list counts them on
// every page).
func (e *Engine) CountFlows() (FlowCounts, error) {
	c := FlowCounts{ByStatus: map[sdk.FlowStatus]int{}}
	err := e.view(func(tx store.ReadTx) error {
		for _, s := range sdk.FlowStatuses() {
			var scanErr error
			err := tx.Scan(idxFlowStatus+string(s)+"/", store.ScanOptions{}, func(it store.Item) bool {
				c.Total++
				c.ByStatus[s]++
				if s.Terminal() {
					return true
				}
				var cancelled bool
				cancelled, scanErr = cancelRequested(tx, it.Key)
				if cancelled {
					c.CancelRequested++
				}
				return scanErr == nil
			})
			if err != nil {
				return err
			}
			if scanErr != nil {
				return scanErr
			}
		}
		return nil
	})
	return c, err
}

// cancelRequested reports whether the flow an index key names carries a
// cancel request. A missing or damaged record carries none (its index
// entry still counts it; check reports it).
func cancelRequested(tx store.ReadTx, key string) (bool, error) {
	it, err := tx.Get(flowPrefix + lastSegment(key))
	if errors.Is(err, store.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil || !bytes.Contains(it.Value, cancelKey) {
		return false, err
	}
	fl, err := decodeRecord[sdk.Flow](it)
	if damaged(err) != nil {
		return false, nil
	}
	return err == nil && fl.CancelRequested(), err
}

// loadFlow reads a flow record, or returns an ErrNotFound error naming it.
// Its Revision is the store's revision of the flow's key.
func loadFlow(tx store.ReadTx, id string) (*sdk.Flow, error) {
	it, err := flowItem(tx, id)
	if err != nil {
		return nil, err
	}
	return decodeRecord[sdk.Flow](it)
}

// flowItem reads flow id's stored item, undecoded, or returns loadFlow's
// ErrNotFound error.
func flowItem(tx store.ReadTx, id string) (store.Item, error) {
	it, err := tx.Get(flowKey(id))
	if errors.Is(err, store.ErrKeyNotFound) {
		return it, fmt.Errorf("%w: flow %q does not exist; list flows with flowgate tasks flow list", sdk.ErrNotFound, id)
	}
	return it, err
}

// saveFlow writes f over old (nil for a new flow) as read in this
// transaction: the write bumps the revision of the flow's key, which f
// then carries; it stamps updated_at and keeps the indexes in step.
func (t *txn) saveFlow(old, f *sdk.Flow) error { return t.saveFlowFrom(old, nil, f) }

// saveFlowFrom is saveFlow, where a new flow (old nil) may be told as
// created as was and moved to f by a second write: its notices and
// history say so, for one record and one revision. was nil is saveFlow.
func (t *txn) saveFlowFrom(old, was, f *sdk.Flow) error {
	var oldKeys []string
	if old != nil {
		oldKeys = flowIndexKeys(old)
	}
	f.UpdatedAt = t.now
	if !t.stampAt.IsZero() {
		f.UpdatedAt = t.stampAt
	}
	if err := t.reindex(oldKeys, flowIndexKeys(f)); err != nil {
		return err
	}
	if err := t.putFlow(old, f); err != nil {
		return err
	}
	from := old
	if was != nil {
		was.Revision = f.Revision
		if err := t.flowHistory(nil, was); err != nil {
			return err
		}
		from = was
	}
	if err := t.queueFlowNotice(from, f); err != nil {
		return err
	}
	return t.flowHistory(from, f)
}

// lastSegment returns what follows the last '/' of an index key: the id.
func lastSegment(key string) string { return key[strings.LastIndexByte(key, '/')+1:] }

// clone deep-copies a flow so a caller can keep it after the transaction.
func cloneFlow(f *sdk.Flow) *sdk.Flow {
	c := *f
	c.State = append(json.RawMessage(nil), f.State...)
	c.Wait = append(json.RawMessage(nil), f.Wait...)
	if f.State == nil {
		c.State = nil
	}
	if f.Wait == nil {
		c.Wait = nil
	}
	c.Decisions = maps.Clone(f.Decisions)
	if f.Output != nil {
		o := *f.Output
		c.Output = &o
	}
	return &c
}
