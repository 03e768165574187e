package flows

import (
	"fmt"
	"sort"
	"strings"
)

// planResults models what a dry run knows before anything runs: approval
// steps count as approved and input steps as pending (lobster-format §17).
func planResults(wf *Workflow) map[string]StepResult {
	yes := true
	results := map[string]StepResult{}
	for _, s := range wf.Steps {
		switch {
		case s.Input != nil:
			results[s.ID] = StepResult{ID: s.ID, Response: map[string]any{"pending": true}, HasResponse: true}
		case s.Approval != nil:
			results[s.ID] = StepResult{ID: s.ID, Approved: &yes}
		}
	}
	return results
}

// DryRun describes what running wf with args would do, in the reference's
// dry-run layout (lobster-format §17), without running anything. Approval
// steps are taken as approved and input steps as pending; other step refs
// stay literal and are flagged as unknown at plan time. A condition that
// depends on such output is shown, and the step counted as running.
func DryRun(wf *Workflow, args map[string]any) string {
	results := planResults(wf)
	pending := pendingIDs(wf, results)
	var b strings.Builder
	plural := "s"
	if len(wf.Steps) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "[DRY RUN] Would execute %d step%s:\n\n", len(wf.Steps), plural)
	for i := range wf.Steps {
		s := &wf.Steps[i]
		prefix := fmt.Sprintf("  %d. %s  ", i+1, s.ID)
		if ok, err := EvalCondition(s.When, results); err == nil && !ok {
			fmt.Fprintf(&b, "%s[skipped — condition: %v]\n", prefix, s.When)
			continue
		}
		b.WriteString(prefix + "[" + planKind(s) + "]\n")
		line := func(format string, a ...any) { fmt.Fprintf(&b, "     "+format+"\n", a...) }
		if _, err := EvalCondition(s.When, results); err != nil {
			line("condition: %v  [depends on step output — unknown at plan time]", s.When)
		}
		switch {
		case s.Parallel != nil:
			line("wait: %s", s.Parallel.Wait)
			if s.Parallel.TimeoutMs > 0 {
				line("timeout: %dms", s.Parallel.TimeoutMs)
			}
			for _, br := range s.Parallel.Branches {
				kind, text := "shell", br.Run
				if br.Pipeline != "" {
					kind, text = "pipeline", br.Pipeline
				}
				line("branch %s: [%s] %s", br.ID, kind, planText(text, args, results, pending))
			}
		case s.Workflow != "":
			line("workflow: %s", planText(s.Workflow, args, results, pending))
			if len(s.WorkflowArgs) > 0 {
				keys := make([]string, 0, len(s.WorkflowArgs))
				for k := range s.WorkflowArgs {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				line("args: %s", strings.Join(keys, ", "))
			}
		case s.ForEach != nil:
			fe := s.ForEach
			line("for_each: %s", fe.Expr)
			line("item_var: %s, index_var: %s", fe.ItemVar, fe.IndexVar)
			if fe.BatchSize > 1 {
				line("batch_size: %d", fe.BatchSize)
			}
			if fe.PauseMs > 0 {
				line("pause_ms: %s", jsNumber(fe.PauseMs))
			}
			line("sub-steps: %d", len(fe.Steps))
		case s.Pipeline != "":
			line("pipeline: %s", planText(s.Pipeline, args, results, pending))
		case s.Run != "":
			line("run: %s", planText(s.Run, args, results, pending))
		case s.Input != nil:
			line("prompt: %s", s.Input.Prompt)
		}
		if str, ok := s.Stdin.(string); ok {
			if IsStepRef(str) {
				line("stdin: %s  [output unknown at plan time]", strings.TrimSpace(str))
			} else {
				line("stdin: %s", planText(str, args, results, pending))
			}
		} else if s.Stdin != nil {
			line("stdin: %s", renderJSON(s.Stdin))
		}
		if s.TimeoutMs > 0 {
			line("timeout: %dms", s.TimeoutMs)
		}
		if s.OnError != "" && s.OnError != "stop" {
			line("on_error: %s", s.OnError)
		}
		if r := s.Retry; r.Max > 1 {
			jitter := ""
			if r.Jitter {
				jitter = ", jitter"
			}
			line("retry: up to %d attempts, %s backoff (base: %sms%s)", r.Max, r.Backoff, jsNumber(r.DelayMs), jitter)
		}
		switch {
		case s.Input != nil:
			line("[input required]")
		case s.Approval != nil:
			line("[approval required]")
		}
	}
	return b.String()
}

func planKind(s *Step) string {
	switch k := s.Kind(); k {
	case "run":
		return "shell"
	case "approval":
		return "no-op"
	default:
		return k
	}
}

// planText resolves what a dry run can, flagging refs to step output it
// cannot know (refs to ids that are no step, like $HOME.x, are plain text).
func planText(s string, args map[string]any, results map[string]StepResult, pending map[string]bool) string {
	out := ResolveTemplate(s, args, results)
	for _, m := range refRE.FindAllStringSubmatch(out, -1) {
		if pending[m[1]] {
			return out + "  [contains step output refs — unknown at plan time]"
		}
	}
	return out
}

// pendingIDs are the step and branch ids whose output a dry run cannot know.
func pendingIDs(wf *Workflow, known map[string]StepResult) map[string]bool {
	ids := map[string]bool{}
	for _, s := range wf.Steps {
		if _, ok := known[s.ID]; !ok {
			ids[s.ID] = true
		}
		if s.Parallel != nil {
			for _, br := range s.Parallel.Branches {
				ids[br.ID] = true
			}
		}
	}
	return ids
}
