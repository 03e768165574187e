package engine

import (
	"errors"

	"github.com/flowgate/flowgate/host/store"
)

// chainPrefix holds one record per chain that has more than its first
// run's facts to keep: its continuation, billing exhaustion, usage and
// budget. A chain without a record is a first run with none of them.
const chainPrefix = "chain/"

func chainKey(id string) string { return chainPrefix + id }

// Chain is what the gateway knows about an execution chain as a whole.
// The engine writes it; ContinueFlow reads it to refuse a continuation the
// chain can no longer have.
type Chain struct {
	ID string `json:"id"`
	// Runs are the chain's flows, first run first: at most two.
	Runs []string `json:"runs"`
	// Continuation is the successor's id once one was accepted.
	Continuation string `json:"continuation,omitempty"`
	// BillingExhausted is set when a task of the chain failed on an
	// explicit billing error (failure classification); BillingEvidence
	// says which. A billing-exhausted chain is never continued.
	BillingExhausted bool   `json:"billing_exhausted,omitempty"`
	BillingEvidence  string `json:"billing_evidence,omitempty"`
	// Usage is what the chain's runs reported using, summed; Budget the
	// soft limit on it (zero fields are unlimited).
	Usage  Usage  `json:"usage,omitzero"`
	Budget Budget `json:"budget,omitzero"`
}

// Usage is reported model usage. Only reported samples are counted.
type Usage struct {
	InputTokens  int64   `json:"input_tokens,omitempty"`
	OutputTokens int64   `json:"output_tokens,omitempty"`
	Cost         float64 `json:"cost,omitempty"`
}

// Budget is a chain's soft usage limit. A zero field is no limit.
type Budget struct {
	Tokens int64   `json:"tokens,omitempty"`
	Cost   float64 `json:"cost,omitempty"`
}

// BudgetExhausted reports whether the chain's reported usage has reached
// its budget in tokens (input plus output) or in cost.
func (c *Chain) BudgetExhausted() bool {
	return (c.Budget.Tokens > 0 && c.Usage.InputTokens+c.Usage.OutputTokens >= c.Budget.Tokens) ||
		(c.Budget.Cost > 0 && c.Usage.Cost >= c.Budget.Cost)
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
	if err != nil || len(ch.Runs) == 0 {
		return err
	}
	for _, run := range ch.Runs {
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
