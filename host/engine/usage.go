package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// chainUsagePrefix holds one ChainUsage record per chain, keyed by chain
// id.
const chainUsagePrefix = "chainusage/"

func chainUsageKey(chainID string) string { return chainUsagePrefix + esc(chainID) }

// ChainUsage is what a chain of runs used and whether it may spend more:
// the usage its tasks reported (every run of the chain, summed as it is
// reported), its soft budget, and the marks that stop it. A chain with no
// record has used nothing reported, has no budget and is not stopped.
type ChainUsage struct {
	ChainID string `json:"chain_id"`
	// Usage sums every usage report of the chain's tasks; nil when none
	// was reported, never a zero that stands for "unknown".
	Usage *sdk.Usage `json:"usage,omitempty"`
	// Budget is the chain's soft budget; nil means none.
	Budget *sdk.Budget `json:"budget,omitempty"`
	// BillingExhaustedAt is when a task of the chain failed on a billing
	// code; from then on no task of the chain starts or is retried.
	BillingExhaustedAt time.Time `json:"billing_exhausted_at,omitzero"`
	// BudgetExhaustedAt is when the reported usage reached the budget;
	// from then on no task of the chain starts or is retried. Calls
	// already running are not stopped.
	BudgetExhaustedAt time.Time `json:"budget_exhausted_at,omitzero"`
}

// Halted says why no more work of the chain may start, or "" when it may.
func (c *ChainUsage) Halted() string {
	switch {
	case !c.BillingExhaustedAt.IsZero():
		return fmt.Sprintf("chain %s is billing-exhausted: a task failed on a billing code at %s; top up the account, then start a new run", c.ChainID, c.BillingExhaustedAt.Format(time.RFC3339))
	case !c.BudgetExhaustedAt.IsZero():
		return fmt.Sprintf("chain %s used its budget (%s); start a new run with a larger --budget-tokens or --budget-cost", c.ChainID, usageLine(c.Usage))
	}
	return ""
}

// usageLine renders u for messages.
func usageLine(u *sdk.Usage) string {
	if u == nil {
		return "no usage reported"
	}
	return fmt.Sprintf("%d tokens from %d reports, cost %g from %d reports", u.Tokens(), u.TokenReports, u.Cost, u.CostReports)
}

// chainOf is the id of the chain flow f belongs to. Until continuations
// exist, every flow is the first and only run of its own chain.
func chainOf(f *sdk.Flow) string { return f.ID }

// loadChainUsage reads the record of chain id; a chain without one gets
// an empty record.
func loadChainUsage(tx store.ReadTx, id string) (*ChainUsage, error) {
	c, err := getRecord[ChainUsage](tx, chainUsageKey(id))
	if errors.Is(err, store.ErrKeyNotFound) {
		return &ChainUsage{ChainID: id}, nil
	}
	return c, err
}

// changeChainUsage lets fn change the record of chain id and saves it.
func (t *txn) changeChainUsage(id string, fn func(c *ChainUsage)) error {
	c, err := loadChainUsage(t.tx, id)
	if err != nil {
		return err
	}
	fn(c)
	return t.put(chainUsageKey(id), c)
}

// ChainUsage returns the usage record of chain id (an empty one when the
// chain has none).
func (e *Engine) ChainUsage(chainID string) (*ChainUsage, error) {
	var c *ChainUsage
	err := e.view(func(tx store.ReadTx) (err error) {
		c, err = loadChainUsage(tx, chainID)
		return err
	})
	return c, err
}

// FlowHalted says why no more work of flow id's chain may start, or ""
// when it may (see ChainUsage.Halted).
func (e *Engine) FlowHalted(flowID string) (string, error) {
	var why string
	err := e.view(func(tx store.ReadTx) error {
		f, err := loadFlow(tx, flowID)
		if err != nil {
			return err
		}
		c, err := loadChainUsage(tx, chainOf(f))
		why = c.Halted()
		return err
	})
	return why, err
}

// MarkChainBillingExhausted records that chain chainID hit a billing
// limit: no task of it starts or is retried from now on. Marking a chain
// twice keeps the first time.
func (e *Engine) MarkChainBillingExhausted(chainID string) error {
	return e.write(func(t *txn) error { return t.markBillingExhausted(chainID) })
}

func (t *txn) markBillingExhausted(chainID string) error {
	return t.changeChainUsage(chainID, func(c *ChainUsage) {
		if c.BillingExhaustedAt.IsZero() {
			c.BillingExhaustedAt = t.now
		}
	})
}

// addChainUsage adds u, reported by a task of flow f, to its chain and
// marks the chain budget-exhausted once the sum reaches its budget.
func (t *txn) addChainUsage(f *sdk.Flow, u *sdk.Usage) error {
	return t.changeChainUsage(chainOf(f), func(c *ChainUsage) {
		c.Usage = c.Usage.Add(u)
		if c.BudgetExhaustedAt.IsZero() && c.Budget.Exceeded(c.Usage) != "" {
			c.BudgetExhaustedAt = t.now
		}
	})
}

// setChainBudget gives the chain of new flow f its budget; nil leaves it
// without one.
func (t *txn) setChainBudget(f *sdk.Flow, b *sdk.Budget) error {
	if b == nil {
		return nil
	}
	return t.changeChainUsage(chainOf(f), func(c *ChainUsage) { c.Budget = b })
}

// checkBudget refuses an impossible budget, naming the flag.
func checkBudget(b *sdk.Budget) error {
	if b != nil && (b.Tokens < 0 || b.Cost < 0) {
		return invalid("a budget must not be negative (--budget-tokens %d, --budget-cost %g)", b.Tokens, b.Cost)
	}
	return nil
}
