package cli

import (
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
)

// gateWarning is what cron add says about a pipeline job whose workflow
// has gates, under the overlap policy skip and with no gate timeout: a
// run parked at a gate stays active until someone answers, and every run
// due meanwhile is skipped. It is empty for any other job.
func gateWarning(j api.CronJob) string {
	if j.Payload.Kind != api.PayloadPipeline || j.Overlap != api.OverlapSkip || j.Payload.GateTimeout != 0 {
		return ""
	}
	wf, err := flows.Load(j.Payload.Pipeline)
	if err != nil || len(wf.Gates()) == 0 {
		return ""
	}
	return fmt.Sprintf("warning: %s waits at a gate (step %s) until someone answers it, and with --overlap skip every run due meanwhile is skipped; "+
		"bound the wait with flowgate cron edit %s --gate-timeout 1h (an unanswered gate is then denied as gate-expired), or queue runs with --overlap buffer_one; "+
		"see a waiting run with flowgate cron status\n", clean(j.Payload.Pipeline), strings.Join(wf.Gates(), ", "), j.ID)
}
