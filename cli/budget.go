package cli

import (
	"fmt"
	"time"

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

// limitRows adds the rows of tasks show that bound the task's run: its
// timeout, max budget and no-progress budget, each when it has one, so a
// detached run shows the defaults the gateway gave it.
func limitRows(row func(k, v string), s sdk.TaskSpec) {
	if s.Timeout > 0 {
		row("timeout", time.Duration(s.Timeout).String())
	}
	if s.MaxBudget > 0 {
		row("maxBudget", time.Duration(s.MaxBudget).String())
	}
	if s.NoProgressBudget > 0 {
		row("noProgressBudget", time.Duration(s.NoProgressBudget).String()+" (armed by the first progress report)")
	}
}
