package audit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/sdk"
)

// A task whose flow record is damaged is audited as usual: the audit does
// not fail, the flow is reported as damaged, and the task is not called
// dangling (its flow is there).
func TestATaskOfADamagedFlowIsAudited(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	task := fx.finished(t, sdk.TaskLost)
	raw(t, fx, "flow/"+task.FlowID, []byte("{not json"))
	r := fx.audit(t, audit.Input{})
	var codes []audit.Code
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	require.ElementsMatch(t, []audit.Code{audit.RestoreFailed, audit.Lost}, codes, "%+v", r.Findings)
}
