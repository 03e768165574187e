package flows_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// TestMalformed loads every file in testdata/malformed and checks that it
// fails with a message carrying file:line, the offending key and the
// reference's wording.
func TestMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		line int
		key  string
		msg  string
	}{
		{"bad_yaml.lobster", 2, "", "invalid YAML"},
		{"bad_indent.yaml", 3, "", "invalid YAML"},
		{"bad_json.json", 3, "", "invalid JSON"},
		{"trailing_comma.json", 4, "", "invalid JSON"},
		{"not_object.yaml", 1, "", "Workflow file must be a JSON/YAML object"},
		{"no_steps.yaml", 1, "steps", "Workflow file requires a non-empty steps array"},
		{"empty_steps.lobster", 2, "steps", "Workflow file requires a non-empty steps array"},
		{"step_not_object.yaml", 2, "steps[0]", "Workflow step must be an object"},
		{"step_no_id.yaml", 2, "steps[0].id", "Workflow step requires an id"},
		{"step_id_number.yaml", 2, "steps[0].id", "Workflow step requires an id"},
		{"duplicate_ids.yaml", 4, "steps[1].id", "Duplicate workflow step id: a"},
		{"branch_dup_step.yaml", 7, "steps[1].parallel.branches[0].id", "Duplicate workflow id across steps/parallel branches: x"},
		{"nothing_exec.yaml", 2, "steps[0]", "Workflow step idle requires run, command, pipeline, workflow, parallel, for_each, approval, or input"},
		{"run_and_workflow.yaml", 4, "steps[0].workflow", "Workflow step both can only define one of run, command, pipeline, workflow, parallel, or for_each"},
		{"run_and_parallel.yaml", 4, "steps[0].parallel", "can only define one of"},
		{"run_not_string.yaml", 3, "steps[0].run", "Workflow step r run must be a string"},
		{"command_not_string.yaml", 3, "steps[0].command", "Workflow step r command must be a string"},
		{"workflow_blank.yaml", 3, "steps[0].workflow", "Workflow step w workflow path cannot be blank"},
		{"workflow_not_string.yaml", 3, "steps[0].workflow", "Workflow step w workflow must be a string (file path)"},
		{"workflow_args_list.yaml", 4, "steps[0].workflow_args", "Workflow step w workflow_args must be a plain object"},
		{"input_with_run.yaml", 4, "steps[0].input", "Workflow step i input steps cannot define run, command, pipeline, workflow, parallel, or for_each"},
		{"approval_and_input.yaml", 4, "steps[0].input", "Workflow step i cannot define both approval and input"},
		{"input_not_object.yaml", 3, "steps[0].input", "Workflow step i input must be an object"},
		{"input_prompt_missing.yaml", 4, "steps[0].input.prompt", "Workflow step i input.prompt must be a string"},
		{"input_schema_not_object.yaml", 5, "steps[0].input.responseSchema", "Workflow step i input.responseSchema must be an object"},
		{"input_schema_invalid.yaml", 5, "steps[0].input.responseSchema", "Workflow step i input.responseSchema is invalid: schema/type must be one of the allowed types"},
		{"approval_bad_field.yaml", 5, "steps[0].approval.required_approver", "Workflow step g approval.required_approver must be a string"},
		{"approval_bad_bool.yaml", 5, "steps[0].approval.requireDifferentApprover", "Workflow step g approval.requireDifferentApprover must be a boolean"},
		{"timeout_zero.yaml", 4, "steps[0].timeout_ms", "Workflow step t timeout_ms must be a positive integer between 1 and 2147483647"},
		{"timeout_string.yaml", 4, "steps[0].timeout_ms", "Workflow step t timeout_ms must be a positive integer"},
		{"timeout_too_big.lobster", 4, "steps[0].timeout_ms", "Workflow step t timeout_ms must be a positive integer"},
		{"timeout_fraction.json", 4, "steps[0].timeout_ms", "Workflow step t timeout_ms must be a positive integer"},
		{"on_error_bad.yaml", 4, "steps[0].on_error", "Workflow step e on_error must be \"stop\", \"continue\", or \"skip_rest\""},
		{"retry_not_object.yaml", 4, "steps[0].retry", "Workflow step r retry must be an object"},
		{"retry_max_zero.yaml", 5, "steps[0].retry.max", "Workflow step r retry.max must be a positive integer"},
		{"retry_backoff_bad.yaml", 5, "steps[0].retry.backoff", "Workflow step r retry.backoff must be \"fixed\" or \"exponential\""},
		{"retry_delay_negative.yaml", 5, "steps[0].retry.delay_ms", "Workflow step r retry.delay_ms must be a finite non-negative number"},
		{"retry_max_delay_inf.yaml", 5, "steps[0].retry.max_delay_ms", "Workflow step r retry.max_delay_ms must be a finite non-negative number"},
		{"retry_jitter_string.yaml", 5, "steps[0].retry.jitter", "Workflow step r retry.jitter must be a boolean"},
		{"parallel_not_object.yaml", 3, "steps[0].parallel", "Workflow step p parallel must be an object"},
		{"parallel_no_branches.yaml", 4, "steps[0].parallel.branches", "Workflow step p parallel requires a non-empty branches array"},
		{"parallel_wait_bad.yaml", 4, "steps[0].parallel.wait", "Workflow step p parallel wait must be \"all\" or \"any\""},
		{"parallel_timeout_bad.yaml", 4, "steps[0].parallel.timeout_ms", "Workflow step p parallel timeout_ms must be a positive integer between 1 and 2147483647"},
		{"parallel_branch_not_object.yaml", 5, "steps[0].parallel.branches[0]", "Workflow step p parallel branches must be objects"},
		{"parallel_branch_no_id.yaml", 5, "steps[0].parallel.branches[0].id", "Workflow step p parallel branch requires an id"},
		{"parallel_branch_step_id.yaml", 5, "steps[0].parallel.branches[0].id", "Workflow step p parallel branch id cannot match the step id"},
		{"parallel_dup_branch.yaml", 7, "steps[0].parallel.branches[1].id", "Workflow step p duplicate parallel branch id: b"},
		{"parallel_branch_no_exec.yaml", 5, "steps[0].parallel.branches[0]", "Workflow step p parallel branch b requires run, command, or pipeline"},
		{"parallel_branch_run_not_string.yaml", 6, "steps[0].parallel.branches[0].run", "Workflow step p parallel branch b run must be a string"},
		{"for_each_not_string.yaml", 3, "steps[0].for_each", "Workflow step f for_each must be a string (step reference expression)"},
		{"for_each_no_steps.yaml", 4, "steps[1].steps", "Workflow step f for_each requires a non-empty steps array"},
		{"for_each_with_run.yaml", 6, "steps[1].run", "Workflow step f for_each cannot also define run, command, pipeline, workflow, or parallel"},
		{"for_each_same_vars.yaml", 7, "steps[1].index_var", "Workflow step f item_var and index_var cannot be the same"},
		{"for_each_var_not_string.yaml", 6, "steps[1].item_var", "Workflow step f item_var must be a string"},
		{"for_each_batch_zero.yaml", 6, "steps[1].batch_size", "Workflow step f batch_size must be a positive integer"},
		{"for_each_pause_negative.yaml", 6, "steps[1].pause_ms", "Workflow step f pause_ms must be a finite non-negative number"},
		{"for_each_approval.yaml", 6, "steps[1].approval", "Workflow step f for_each steps cannot define approval (use a separate step after the loop)"},
		{"for_each_stdin.yaml", 6, "steps[1].stdin", "Workflow step f for_each steps cannot define stdin (loop input comes from the for_each expression)"},
		{"for_each_sub_no_id.yaml", 7, "steps[1].steps[0].id", "Workflow step f for_each sub-step requires an id"},
		{"for_each_sub_conflict.yaml", 7, "steps[1].steps[0].id", "Workflow step f for_each sub-step id 'item' conflicts with loop variable"},
		{"for_each_sub_dup.yaml", 9, "steps[1].steps[1].id", "Workflow step f duplicate for_each sub-step id: s"},
		{"for_each_sub_approval.yaml", 9, "steps[1].steps[0].approval", "Workflow step f for_each sub-steps cannot contain approval or input steps"},
		{"for_each_sub_workflow.yaml", 8, "steps[1].steps[0].workflow", "Workflow step f for_each sub-step s cannot define workflow, parallel, or for_each"},
		{"for_each_sub_no_exec.yaml", 7, "steps[1].steps[0]", "Workflow step f for_each sub-step s requires run, command, or pipeline"},
		{"condition_syntax.yaml", 4, "steps[0].when", "Unsupported condition: yes"},
		{"condition_dangling.yaml", 6, "steps[1].condition", "Unsupported condition: $a.stdout =="},
		{"condition_type.yaml", 4, "steps[0].when", "Unsupported condition type"},
		{"unknown_ref_condition.yaml", 4, "steps[0].when", "Unknown step reference: nope.approved"},
		{"forward_ref_stdin.yaml", 4, "steps[0].stdin", "Unknown step reference: later.stdout (step later has not run yet"},
		{"unknown_ref_for_each.yaml", 3, "steps[0].for_each", "Unknown step reference: ghost.json"},
		{"cost_limit_not_object.yaml", 1, "cost_limit", "cost_limit must be an object"},
		{"cost_limit_negative.yaml", 2, "cost_limit.max_usd", "cost_limit.max_usd must be a non-negative number"},
		{"cost_limit_action.json", 3, "cost_limit.action", "cost_limit.action must be \"warn\" or \"stop\""},
		{"json_bad_on_error.json", 6, "steps[0].on_error", "on_error must be"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "malformed", tt.file)
			wf, err := flows.Load(path)
			require.Nil(t, wf)
			require.Error(t, err)
			abs, _ := filepath.Abs(path)
			msg := err.Error()
			require.Contains(t, msg, fmt.Sprintf("%s:%d:", abs, tt.line))
			if tt.key != "" {
				require.Contains(t, msg, ": "+tt.key+": ")
			}
			require.Contains(t, msg, tt.msg)

			var ferr *flows.Error
			require.ErrorAs(t, err, &ferr)
			require.Equal(t, abs, ferr.File)
		})
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "malformed"))
	require.NoError(t, err)
	for _, e := range entries {
		require.True(t, seen[e.Name()], "testdata/malformed/%s has no table entry", e.Name())
	}
	require.GreaterOrEqual(t, len(tests), 30)
}
