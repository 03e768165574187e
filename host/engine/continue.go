package engine

import (
	"os"
	"strings"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// ContinueFlow accepts the one continuation of failed or partial managed
// flow sourceID, or refuses it. On acceptance it stores, in one
// transaction and before any work starts, the successor flow (queued, in
// the source's chain, starting from the source's state, carrying the
// receipt: source, revision, reason, review, assignments, reused and
// rerun nodes), the chain's record and the successor's flow.started
// event; the controller starts it from there, under this gateway or the
// next one.
//
// Submitting the identical request again returns the same successor with
// created false. Refusals change nothing and name their rule (sdk.ErrInvalid,
// exit 2): a source that is not failed or partial, cancelled, interrupted
// with an unknown outcome (lost, or with a lost task), a billing-exhausted
// chain, an exhausted chain budget, a changed controller or definition, a
// missing plan snapshot, a chain that already has its continuation or two
// runs, and the assignment rules of flowrule.Continuation. A stale
// revision is a *sdk.RevisionConflictError (exit 3).
func (e *Engine) ContinueFlow(sourceID string, req sdk.ContinueRequest) (succ *sdk.Flow, created bool, err error) {
	req.Reason, req.Review = strings.TrimSpace(req.Reason), strings.TrimSpace(req.Review)
	if req.Reason == "" {
		return nil, false, invalid("a continuation needs a reason (--reason): say what went wrong and what the continuation changes")
	}
	if err := checkExpected(req.ExpectedRevision); err != nil {
		return nil, false, err
	}
	// The definition file is hashed before the transaction: no file I/O
	// while the store is locked.
	hash, err := e.definitionHash(sourceID)
	if err != nil {
		return nil, false, err
	}
	err = e.write(func(t *txn) error {
		succ, created = nil, false
		src, err := loadFlow(t.tx, sourceID)
		if err != nil {
			return err
		}
		if src.SourceFlowID != "" {
			return flowrule.Refuse("two runs", "flow %s is already the continuation of %s; a chain has at most two runs: start a new flow to carry the work on", src.ID, src.SourceFlowID)
		}
		ch, err := loadChain(t.tx, src.Chain())
		if err != nil {
			return err
		}
		if ch.Continuation != "" {
			succ, err = existingContinuation(t.tx, ch, src, req)
			return err
		}
		receipt, err := acceptable(t.tx, src, ch, req, hash)
		if err != nil {
			return err
		}
		id, err := e.ids.next(t.now)
		if err != nil {
			return err
		}
		if succ, err = t.startContinuation(flowrule.Successor(id, src, receipt, t.now), ch, req.By); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return succ, created, nil
}

// acceptable applies the continuation rules to source src of chain ch in
// the order a person would fix them, and returns the receipt to store.
func acceptable(tx store.ReadTx, src *sdk.Flow, ch *Chain, req sdk.ContinueRequest, hash definition) (*sdk.Continuation, error) {
	if src.SyncMode != sdk.SyncManaged {
		return nil, flowrule.Refuse("managed flows", "flow %s is %s; only a managed flow, which a controller drives from a plan, can be continued", src.ID, src.SyncMode)
	}
	if src.Revision != req.ExpectedRevision {
		return nil, &sdk.RevisionConflictError{Expected: req.ExpectedRevision, Current: src}
	}
	tasks, err := flowTasks(tx, src.ID)
	if err != nil {
		return nil, err
	}
	if err := flowrule.Settled(src, stored.Publics(tasks), strings.TrimSpace(req.FromStep) != ""); err != nil {
		return nil, err
	}
	if ch.BillingExhausted() {
		return nil, flowrule.Refuse("billing exhausted", "chain %s stopped on a billing error (%s); add credit or raise the limit with the provider, then start a new flow", ch.ID, ch.BillingEvidence)
	}
	if ch.BudgetExhausted() {
		return nil, flowrule.Refuse("budget exhausted", "chain %s has used its budget (reported usage: %s; budget: %s); start a new flow with a new budget", ch.ID, usageLine(ch.Usage), budgetLine(ch.Budget))
	}
	receipt, err := flowrule.Receipt(src, ch.ID, req)
	if err != nil {
		return nil, err
	}
	plan, _ := flowrule.PlanOf(src) // Receipt read it
	if hash.err != nil {
		return nil, flowrule.Refuse("definition changed", "flow %s ran %s, which cannot be read now (%v); restore it or start a new flow", src.ID, plan.DefinitionFile, hash.err)
	}
	if hash.sum != plan.DefinitionHash {
		return nil, flowrule.Refuse("definition changed", "flow %s ran %s with content hash %s and it now hashes %s; a continuation reruns the same definition: restore it, or start a new flow with the changed one", src.ID, plan.DefinitionFile, short(plan.DefinitionHash), short(hash.sum))
	}
	return receipt, nil
}

// existingContinuation returns chain ch's successor when req is the
// request that made it (a repeated submission), else refuses.
func existingContinuation(tx store.ReadTx, ch *Chain, src *sdk.Flow, req sdk.ContinueRequest) (*sdk.Flow, error) {
	succ, err := loadFlow(tx, ch.Continuation)
	if err != nil {
		return nil, err
	}
	if flowrule.SameRequest(succ.Continuation, src, req) {
		return succ, nil
	}
	return nil, flowrule.Refuse("one continuation", "chain %s already has its continuation, flow %s, accepted with another request; a chain has at most two runs: follow flow %s", ch.ID, succ.ID, succ.ID)
}

// startContinuation stores successor f, with the chain's usage so far as
// its usage before the run, the chain's record, f's flow.started event and
// the source's continued entry naming by.
func (t *txn) startContinuation(f *sdk.Flow, ch *Chain, by string) (*sdk.Flow, error) {
	if ch.Usage != nil {
		before := *ch.Usage
		f.UsageBeforeRun = &before
	}
	if err := t.saveFlow(nil, f); err != nil {
		return nil, err
	}
	if err := t.recordContinued(f, by); err != nil {
		return nil, err
	}
	ch.Runs, ch.Continuation = []string{f.SourceFlowID, f.ID}, f.ID
	if err := t.put(chainKey(ch.ID), ch); err != nil {
		return nil, err
	}
	return f, t.appendEvent(f, sdk.EventFlowStarted, "", nil)
}

// definition is a definition file's content hash, or why it could not be
// read; the zero value is a flow whose plan names no file.
type definition struct {
	sum string
	err error
}

// definitionHash hashes the definition file flow id's plan names, if any.
func (e *Engine) definitionHash(id string) (definition, error) {
	f, err := e.GetFlow(id)
	if err != nil {
		return definition{}, err
	}
	plan, err := flowrule.PlanOf(f)
	if err != nil || plan.DefinitionFile == "" {
		return definition{}, nil // acceptable reports a missing plan
	}
	b, err := os.ReadFile(plan.DefinitionFile)
	if err != nil {
		return definition{err: err}, nil
	}
	return definition{sum: sdk.HashDefinition(b)}, nil
}

// short abbreviates a content hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
