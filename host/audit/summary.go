package audit

// Counts is the total, warnings and errors of a set of findings, with a
// count for every code of their kind (zero included).
type Counts struct {
	Total    int          `json:"total"`
	Warnings int          `json:"warnings"`
	Errors   int          `json:"errors"`
	ByCode   map[Code]int `json:"by_code"`
}

// Combined is the total of task and flow findings together.
type Combined struct {
	Total    int `json:"total"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
}

// Summary has the reference's shape: the task counts at the top level
// (its legacy task-only summary), the flow counts under task_flows, and
// both together under combined.
type Summary struct {
	Counts
	TaskFlows Counts   `json:"task_flows"`
	Combined  Combined `json:"combined"`
}

func newCounts(codes []Code) Counts {
	c := Counts{ByCode: make(map[Code]int, len(codes))}
	for _, code := range codes {
		c.ByCode[code] = 0
	}
	return c
}

func (c *Counts) add(f Finding) {
	c.Total++
	c.ByCode[f.Code]++
	if f.Severity == Error {
		c.Errors++
	} else {
		c.Warnings++
	}
}

// Summarize counts findings by kind, severity and code.
func Summarize(fs []Finding) Summary {
	s := Summary{Counts: newCounts(TaskCodes()), TaskFlows: newCounts(FlowCodes())}
	for _, f := range fs {
		if f.Kind == KindTask {
			s.add(f)
		} else {
			s.TaskFlows.add(f)
		}
	}
	s.Combined = Combined{
		Total:    s.Total + s.TaskFlows.Total,
		Errors:   s.Errors + s.TaskFlows.Errors,
		Warnings: s.Warnings + s.TaskFlows.Warnings,
	}
	return s
}
