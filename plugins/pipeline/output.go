package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// Bounds of a pipeline flow's state. A step's stdout up to
// sdk.InlineStdout bytes is kept in the state; a larger one (at most
// maxStepOutput) stays in its task's log file, which the state names
// with its digest, and is read back when a reference needs it. The
// encoded state of a flow is refused over maxState, which leaves room in
// the flow's record (the store keeps at most 1 MiB per record) for its
// wait and bookkeeping: a workflow that would go past it fails with a
// message saying which step, instead of leaving the flow blocked.
//
// A parked flow's record holds its wait beside its state: maxWait bounds
// the gate's JSON so that the two stay within the 1 MiB with 32 KiB for
// the record's other fields. An approval's wait (items cut to
// maxGateItems, a preview of previewLimit characters) always fits; a
// gate whose prompt, schema, defaults or subject make it larger fails the
// flow, saying so.
const (
	maxStepOutput = 256 << 10
	maxState      = 768 << 10
	maxWait       = 224 << 10
)

// errStateTooLarge is returned by state.encode when the state is over
// maxState, and errWaitTooLarge by run.wait when a gate is over maxWait.
var (
	errStateTooLarge = errors.New("the flow's state is too large")
	errWaitTooLarge  = errors.New("the gate is too large to park the flow at")
)

// shellResult is the result of a run: step whose task succeeded with res:
// its stdout inline when small, else a reference to its log file. The
// stdout of the reference is taken from the task's record, which holds
// the whole output up to 256 KiB and can be read on every gateway of a
// shared store; only a record that shed its stdout sends the controller
// to the log file, which is on the machine that ran the task.
func shellResult(id string, res sdk.Result) (flows.StepResult, error) {
	if res.StdoutBytes > maxStepOutput {
		return flows.StepResult{}, fmt.Errorf("step %s printed %d bytes, more than a step's output may be (%d); write large output to a file and print its path", id, res.StdoutBytes, maxStepOutput)
	}
	if res.StdoutPath == "" {
		if res.StdoutBytes > int64(len(res.Stdout)) {
			return flows.StepResult{}, fmt.Errorf("step %s printed %d bytes, but its task record keeps none of it and names no log file; run the pipeline again", id, res.StdoutBytes)
		}
		return flows.ShellResult(id, res.Stdout), nil
	}
	r := flows.StepResult{ID: id, StdoutFile: res.StdoutPath, StdoutSHA256: res.StdoutSHA256}
	if recordHolds(res) {
		r.SetStdout(res.Stdout)
		return r, nil
	}
	if err := loadStdout(&r, nil); err != nil {
		return flows.StepResult{}, err
	}
	return r, nil
}

// recordHolds says whether res, a task's result, holds the whole stdout
// it names: the runner keeps up to 256 KiB of it in the record, unless
// the record was near its size limit when the task ended and shed it.
func recordHolds(res sdk.Result) bool {
	if int64(len(res.Stdout)) != res.StdoutBytes {
		return false
	}
	sum := sha256.Sum256([]byte(res.Stdout))
	return hex.EncodeToString(sum[:]) == res.StdoutSHA256
}

// loadStdout reads the stdout of r, a result whose output is in its
// StdoutFile, and checks it is still what the step printed. When the
// file cannot be read here (the task ran on another gateway of a shared
// store, or its file changed), it takes the stdout from the record of
// the task that names the file, found through recs; a nil recs reads the
// file only.
func loadStdout(r *flows.StepResult, recs *taskOutputs) error {
	ferr := readStdoutFile(r)
	if ferr == nil || recs == nil {
		return ferr
	}
	res, ok, err := recs.find(r.StdoutFile)
	if err != nil {
		return fmt.Errorf("%w; reading the step's task record instead failed too: %v", ferr, err)
	}
	if !ok || res.StdoutSHA256 != r.StdoutSHA256 || !recordHolds(res) {
		return ferr
	}
	r.SetStdout(res.Stdout)
	return nil
}

// readStdoutFile reads the stdout of r from its StdoutFile (see
// loadStdout).
func readStdoutFile(r *flows.StepResult) error {
	f, err := os.Open(r.StdoutFile)
	if err != nil {
		return fmt.Errorf("the output of step %s was kept in %s, which cannot be read (%v), and no task record of the flow holds it; its task's logs were removed, so run the pipeline again", r.ID, r.StdoutFile, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStepOutput+1))
	if err != nil {
		return fmt.Errorf("read the output of step %s from %s: %w", r.ID, r.StdoutFile, err)
	}
	sum := sha256.Sum256(b)
	if len(b) > maxStepOutput || hex.EncodeToString(sum[:]) != r.StdoutSHA256 {
		return fmt.Errorf("the output of step %s in %s changed since the step ran; run the pipeline again", r.ID, r.StdoutFile)
	}
	r.SetStdout(string(b))
	return nil
}
