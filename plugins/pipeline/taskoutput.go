package pipeline

import "github.com/flowgate/flowgate/sdk"

// taskOutputs finds the result of the task whose stdout is in a given
// log file, among the tasks of a flow and, in a continuation, of its
// source flow. A state names a large step output by its log file, which
// is on the machine that ran the task; on a shared store the flow may be
// driven from another gateway, and the task's record, which every
// gateway reads, holds the same output (see loadStdout).
type taskOutputs struct {
	// list returns the tasks of a flow (sdk.Host.ListTasks).
	list func(flowID string) ([]*sdk.Task, error)
	// flows are the flow and its source flow ("" for none).
	flows []string
	// byLog is every listed task's result by its StdoutPath; nil until
	// the first find lists them, once for the pass.
	byLog map[string]sdk.Result
	// failed is the error of a list that failed: the Host may answer
	// next time, so the pass ends on it instead of failing the flow (see
	// run.hostFailed).
	failed error
}

// find returns the result of the task whose stdout is in the file path,
// and whether there is one.
func (o *taskOutputs) find(path string) (sdk.Result, bool, error) {
	if o.byLog == nil {
		byLog := map[string]sdk.Result{}
		for _, id := range o.flows {
			if id == "" {
				continue
			}
			ts, err := o.list(id)
			if err != nil {
				o.failed = err
				return sdk.Result{}, false, err
			}
			for _, t := range ts {
				if t.Result != nil && t.Result.StdoutPath != "" {
					byLog[t.Result.StdoutPath] = *t.Result
				}
			}
		}
		o.byLog = byLog
	}
	res, ok := o.byLog[path]
	return res, ok, nil
}
