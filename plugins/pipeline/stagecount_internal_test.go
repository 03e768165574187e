package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// However many pipelines a flow runs and however many stages they have,
// the stage reports take no more of the state than CheckBound's fixed
// part allows them.
func TestStageReportsFitTheirBudget(t *testing.T) {
	t.Parallel()
	r := &run{st: &state{raw: map[string]json.RawMessage{}}}
	stages := make([]flows.Stage, 10000)
	counts := make([]int, len(stages))
	for i := range stages {
		stages[i].Name = strings.Repeat("n", 100)
		counts[i] = 1 << 30
	}
	r.countStages(&pipe{r: r, s: &flows.Step{}, id: strings.Repeat("x", maxReportKey), stages: stages}, nil)
	require.Empty(t, r.st.Stages, "a pipeline whose id is over maxReportKey keeps no report")
	for i := range 2 * maxStageReports {
		id := fmt.Sprintf("%0*d", maxReportKey-2, i)
		r.countStages(&pipe{r: r, s: &flows.Step{}, id: id, stages: stages, counts: counts}, nil)
	}
	require.Len(t, r.st.Stages, maxStageReports)
	b, err := json.Marshal(r.st.Stages)
	require.NoError(t, err)
	require.LessOrEqual(t, len(`"stages":,`)+len(b), len(`"stages":{},`)+maxStageReports*(maxReportKey+len(`:,`)+maxReportBytes))
	for _, rep := range r.st.Stages {
		require.Equal(t, len(stages), len(rep.Stages)+rep.More)
	}
}
