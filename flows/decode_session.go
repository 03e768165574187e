package flows

// session decodes the agent-session keys of a command step:
// resume_prompt (a string, the prompt a step continuing an interrupted
// session gets instead of its original one) and fresh (a boolean: the
// step always starts a new session, as verifiers and judges should).
// Both apply to run/command steps only; elsewhere they are refused.
func (d *decoder) session(c *stepCtx, s *Step) {
	o := c.o
	for _, k := range []string{"resume_prompt", "fresh"} {
		if _, ok := o.get(k); ok && s.Run == "" {
			d.fail(c, k, "%s applies to steps with run or command only", k)
			return
		}
	}
	if v, ok := o.get("resume_prompt"); ok {
		if p, ok := str(v); ok && p != "" {
			s.ResumePrompt = p
		} else {
			d.fail(c, "resume_prompt", "resume_prompt must be a non-empty string: the prompt a continued session gets")
		}
	}
	if v, ok := o.get("fresh"); ok {
		if f, ok := boolean(v); ok {
			s.Fresh = f
		} else {
			d.fail(c, "fresh", "fresh must be true or false")
		}
	}
	if s.Fresh && s.ResumePrompt != "" {
		d.fail(c, "resume_prompt", "fresh: true never continues a session, so resume_prompt has no use; drop one of them")
	}
}
