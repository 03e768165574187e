package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// chainPrefix holds one record per chain that has more than its first
// run's facts to keep: its continuation, billing exhaustion, usage and
// budget. A chain without a record is a first run with none of them.
const chainPrefix = "chain/"

func chainKey(id string) string { return chainPrefix + id }

// Chain is what the gateway knows about an execution chain as a whole:
// its runs and continuation (ContinueFlow), the usage its tasks reported
// and its soft budget, and the marks that stop it. The engine writes it;
// ContinueFlow reads it to refuse a continuation the chain can no longer
// have, and the runner asks Halted before it starts or retries a task.
type Chain struct {
	ID string `json:"id"`
	// Runs are the chain's flows, first run first: at most two. A chain
	// that was never continued may have none recorded; its only run is
	// the flow whose id is the chain's.
	Runs []string `json:"runs,omitempty"`
	// Continuation is the successor's id once one was accepted.
	Continuation string `json:"continuation,omitempty"`
	// Usage sums every usage report of the chain's tasks (every run,
	// summed as reported); nil when none was reported, never a zero that
	// stands for "unknown".
	Usage *sdk.Usage `json:"usage,omitempty"`
	// Budget is the chain's soft budget; nil means none.
	Budget *sdk.Budget `json:"budget,omitempty"`
	// BillingExhaustedAt is when a task of the chain failed on an explicit
	// billing code (failure classification), and BillingEvidence which
	// code; from then on no task of the chain starts or is retried, and
	// the chain is never continued.
	BillingExhaustedAt time.Time `json:"billing_exhausted_at,omitzero"`
	BillingEvidence    string    `json:"billing_evidence,omitempty"`
	// BudgetExhaustedAt is when the reported usage reached the budget;
	// from then on no task of the chain starts or is retried. Calls
	// already running are not stopped.
	BudgetExhaustedAt time.Time `json:"budget_exhausted_at,omitzero"`
}

// BillingExhausted reports whether a task of the chain failed on a
// billing code.
func (c *Chain) BillingExhausted() bool { return !c.BillingExhaustedAt.IsZero() }

// BudgetExhausted reports whether the chain's reported usage has reached
// its budget in tokens (input plus output) or in cost.
func (c *Chain) BudgetExhausted() bool {
	return !c.BudgetExhaustedAt.IsZero() || c.Budget.Exceeded(c.Usage) != ""
}

// Halted says why no more work of the chain may start, or "" when it may.
func (c *Chain) Halted() string {
	switch {
	case c.BillingExhausted():
		return fmt.Sprintf("chain %s is billing-exhausted: a task failed on a billing code (%s) at %s; top up the account, then start a new run", c.ID, c.BillingEvidence, c.BillingExhaustedAt.Format(time.RFC3339))
	case c.BudgetExhausted():
		return fmt.Sprintf("chain %s used its budget (%s); start a new run with a larger --budget-tokens or --budget-cost", c.ID, usageLine(c.Usage))
	}
	return ""
}

// loadChain reads chain id's record, or a record with just the id when it
// has none yet.
func loadChain(tx store.ReadTx, id string) (*Chain, error) {
	c, err := getRecord[Chain](tx, chainKey(id))
	if errors.Is(err, store.ErrKeyNotFound) {
		return &Chain{ID: id}, nil
	}
	return c, err
}

// pruneChain deletes chain id's record once none of its runs is left.
func (t *txn) pruneChain(id string) error {
	ch, err := loadChain(t.tx, id)
	if err != nil {
		return err
	}
	runs := ch.Runs
	if len(runs) == 0 {
		runs = []string{id} // never continued: the first run is the chain's namesake
	}
	for _, run := range runs {
		if _, err := t.tx.Get(flowKey(run)); !errors.Is(err, store.ErrKeyNotFound) {
			return err // a run is left (or the read failed)
		}
	}
	return t.del(chainKey(id))
}

// GetChain returns chain id's record: its runs (the first run alone when
// it was never continued), continuation, billing state, usage and budget.
// It returns an ErrNotFound error when no flow belongs to the chain.
func (e *Engine) GetChain(id string) (*Chain, error) {
	var c *Chain
	err := e.view(func(tx store.ReadTx) error {
		var err error
		if c, err = loadChain(tx, id); err != nil || len(c.Runs) > 0 {
			return err
		}
		f, err := loadFlow(tx, id)
		if err != nil {
			return err
		}
		c.Runs = []string{f.ID}
		return nil
	})
	return c, err
}
