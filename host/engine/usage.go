package engine

import (
	"fmt"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// budgetLine renders b for messages.
func budgetLine(b *sdk.Budget) string {
	if b == nil {
		return "none"
	}
	return fmt.Sprintf("%d tokens, cost %g (zero is no limit)", b.Tokens, b.Cost)
}

// usageLine renders u for messages.
func usageLine(u *sdk.Usage) string {
	if u == nil {
		return "no usage reported"
	}
	return fmt.Sprintf("%d tokens from %d reports, cost %g from %d reports", u.Tokens(), u.TokenReports, u.Cost, u.CostReports)
}

// changeChain lets fn change the record of chain id and saves it.
func (t *txn) changeChain(id string, fn func(c *Chain)) error {
	c, err := loadChain(t.tx, id)
	if err != nil {
		return err
	}
	fn(c)
	return t.put(chainKey(id), c)
}

// FlowHalted says why no more work of flow id's chain may start, or ""
// when it may (see Chain.Halted).
func (e *Engine) FlowHalted(flowID string) (string, error) {
	var why string
	err := e.view(func(tx store.ReadTx) error {
		h, err := loadFlowHead(tx, flowID)
		if err != nil {
			return err
		}
		c, err := loadChain(tx, h.chain())
		why = c.Halted()
		return err
	})
	return why, err
}

// MarkChainBillingExhausted records that chain chainID hit a billing
// limit: no task of it starts or is retried from now on. Marking a chain
// twice keeps the first time.
func (e *Engine) MarkChainBillingExhausted(chainID, evidence string) error {
	return e.write(func(t *txn) error { return t.markBillingExhausted(chainID, evidence) })
}

func (t *txn) markBillingExhausted(chainID, evidence string) error {
	return t.changeChain(chainID, func(c *Chain) {
		if c.BillingExhaustedAt.IsZero() {
			c.BillingExhaustedAt, c.BillingEvidence = t.now, evidence
		}
	})
}

// addChainUsage adds u, reported by a task of flow f, to its chain and
// marks the chain budget-exhausted once the sum reaches its budget.
func (t *txn) addChainUsage(f *sdk.Flow, u *sdk.Usage) error {
	return t.changeChain(f.Chain(), func(c *Chain) {
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
	return t.changeChain(f.Chain(), func(c *Chain) { c.Budget = b })
}

// checkBudget refuses an impossible budget, naming the flag.
func checkBudget(b *sdk.Budget) error {
	if b != nil && (b.Tokens < 0 || b.Cost < 0) {
		return invalid("a budget must not be negative (--budget-tokens %d, --budget-cost %g)", b.Tokens, b.Cost)
	}
	return nil
}
