package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/flowgate/flowgate/sdk"
)

// budgetFlags are --budget-tokens and --budget-cost: the soft usage
// budget of the chain a new flow or task starts.
type budgetFlags struct {
	tokens int64
	cost   float64
}

// add declares the flags on fl.
func (b *budgetFlags) add(fl *pflag.FlagSet) {
	fl.Int64Var(&b.tokens, "budget-tokens", 0, "soft budget: start no more tasks of this chain once its tasks reported this many tokens (reported usage only; running calls are not stopped)")
	fl.Float64Var(&b.cost, "budget-cost", 0, "soft budget: start no more tasks of this chain once its tasks reported this much cost (reported usage only; running calls are not stopped)")
}

// budget is the budget the flags give; nil when neither is set.
func (b budgetFlags) budget() (*sdk.Budget, error) {
	if b.tokens < 0 || b.cost < 0 {
		return nil, usageError{fmt.Errorf("--budget-tokens and --budget-cost must not be negative (got %d and %g)", b.tokens, b.cost)}
	}
	if b.tokens == 0 && b.cost == 0 {
		return nil, nil
	}
	return &sdk.Budget{Tokens: b.tokens, Cost: b.cost}, nil
}
