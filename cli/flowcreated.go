package cli

import (
	"maps"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// createdRows adds what `tasks flow show` says about a flow its
// controller created (Host.CreateFlow): the key it asked under, the flow
// it was made for, and its labels, so an operator can trace where it
// came from.
func createdRows(row func(k, v string), v apitype.FlowView) {
	if v.IdempotencyKey != "" {
		row("idempotencyKey", clean(v.IdempotencyKey))
	}
	if v.ParentFlowID != "" {
		row("parent", v.ParentFlowID)
	}
	if len(v.Labels) > 0 {
		labels := make([]string, 0, len(v.Labels))
		for _, k := range slices.Sorted(maps.Keys(v.Labels)) {
			labels = append(labels, k+"="+v.Labels[k])
		}
		row("labels", clean(strings.Join(labels, ", ")))
	}
}
