package flowrule

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// Mover moves f to status to: Move, plus whatever the host must do
// when a flow moves.
type Mover func(f *sdk.Flow, to sdk.FlowStatus) error

// Move moves flow f to status to at time now, as every host does: it
// checks the move with sdk.CheckFlowMove (and changes nothing if it is
// refused), then keeps the fields that go with a status. A terminal status
// stamps EndedAt and sets Wait to JSON null (an ended flow waits for
// nothing); any other status clears EndedAt. BlockedTaskID and
// BlockedSummary are kept only by blocked and failed. Controllers never
// call it; hosts (the gateway, sdktest) do, so they agree. It is the
// Mover sdktest uses; the gateway wraps it.
func Move(f *sdk.Flow, to sdk.FlowStatus, now time.Time) error {
	if err := sdk.CheckFlowMove(f, to); err != nil {
		return err
	}
	f.Status = to
	if to.Terminal() {
		f.EndedAt = now
		f.Wait = json.RawMessage("null")
	} else {
		f.EndedAt = time.Time{}
	}
	if to != sdk.FlowBlocked && to != sdk.FlowFailed {
		f.BlockedTaskID, f.BlockedSummary = "", ""
	}
	return nil
}

// ParkStatus is the status SetWaiting parks a flow in: blocked when w
// names a blocking task or gives a summary (ignoring spaces), else
// waiting.
func ParkStatus(w sdk.WaitRequest) sdk.FlowStatus {
	if strings.TrimSpace(w.BlockedTaskID) != "" || strings.TrimSpace(w.BlockedSummary) != "" {
		return sdk.FlowBlocked
	}
	return sdk.FlowWaiting
}

// Park applies SetWaiting's request w to f: it moves f to ParkStatus(w),
// records the blocked fields (trimmed; empty when waiting), and the
// current step, state and wait where w gives them.
func Park(f *sdk.Flow, w sdk.WaitRequest, move Mover) error {
	if err := move(f, ParkStatus(w)); err != nil {
		return err
	}
	f.BlockedTaskID, f.BlockedSummary = strings.TrimSpace(w.BlockedTaskID), strings.TrimSpace(w.BlockedSummary)
	step(f, w.CurrentStep)
	if w.State != nil {
		f.State = w.State
	}
	if w.Wait != nil {
		f.Wait = w.Wait
	}
	return nil
}

// ResumeStatus returns the status Resume moves to for r: queued when r
// names none. Any status but queued or running is refused with
// sdk.ErrInvalid.
func ResumeStatus(r sdk.ResumeRequest) (sdk.FlowStatus, error) {
	switch r.Status {
	case "":
		return sdk.FlowQueued, nil
	case sdk.FlowQueued, sdk.FlowRunning:
		return r.Status, nil
	}
	return "", fmt.Errorf("%w: a flow resumes as queued or running, not %q", sdk.ErrInvalid, r.Status)
}

// Resume applies Resume's request r to f: a queued flow starts (or stays
// queued), a waiting or blocked one resumes. The wait becomes JSON null;
// the current step and state are recorded where r gives them. When f was
// waiting or blocked, Resume returns the data of the flow.resumed event
// the host must queue (an sdk.Resumed); starting a queued flow tells
// nobody, and the data is nil.
func Resume(f *sdk.Flow, r sdk.ResumeRequest, move Mover) (json.RawMessage, error) {
	to, err := ResumeStatus(r)
	if err != nil {
		return nil, err
	}
	parked := f.Status == sdk.FlowWaiting || f.Status == sdk.FlowBlocked
	if err := move(f, to); err != nil {
		return nil, err
	}
	f.Wait = json.RawMessage("null")
	step(f, r.CurrentStep)
	if r.State != nil {
		f.State = r.State
	}
	if !parked {
		return nil, nil
	}
	return ResumedData(sdk.Resumed{Status: f.Status})
}

// ResumedData encodes the data of a flow.resumed event.
func ResumedData(r sdk.Resumed) (json.RawMessage, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode flow.resumed: %w", err)
	}
	return b, nil
}

// End applies Finish (to succeeded) or Fail (to failed, or partial when
// e.Partial) with request e to f: the current step and state where e gives
// them, for a success the output e gives, and, for a failure, what the
// flow failed on (the blocked fields, trimmed).
func End(f *sdk.Flow, to sdk.FlowStatus, e sdk.EndRequest, move Mover) error {
	if to != sdk.FlowSucceeded && to != sdk.FlowFailed {
		return fmt.Errorf("%w: a flow ends as succeeded or failed here, not %q", sdk.ErrInvalid, to)
	}
	if to == sdk.FlowFailed && e.Partial {
		to = sdk.FlowPartial
	}
	if err := move(f, to); err != nil {
		return err
	}
	step(f, e.CurrentStep)
	if e.State != nil {
		f.State = e.State
	}
	if to != sdk.FlowSucceeded {
		f.BlockedTaskID, f.BlockedSummary = strings.TrimSpace(e.BlockedTaskID), strings.TrimSpace(e.BlockedSummary)
	} else if e.Output != nil {
		o := *e.Output
		f.Output = &o
	}
	return nil
}

// CheckOutput refuses, with sdk.ErrInvalid, an output whose Value is not
// valid JSON or that names a kept file without its digest: hosts check it
// before they change anything.
func CheckOutput(o *sdk.Output) error {
	if o == nil {
		return nil
	}
	if len(o.Value) > 0 && !json.Valid(o.Value) {
		return fmt.Errorf("%w: the flow's output value is not valid JSON", sdk.ErrInvalid)
	}
	for _, f := range []*sdk.OutputFile{o.File, o.TextFile} {
		if f != nil && f.SHA256 == "" {
			return fmt.Errorf("%w: the flow's output names a kept file without its sha256; name the digest of the kept bytes", sdk.ErrInvalid)
		}
	}
	return nil
}

// Update applies UpdateFlow's fields u to f, leaving its status alone:
// state and wait where u gives them (JSON null stores null), and the
// current step and blocked fields where u points at a value (trimmed; an
// empty string clears).
func Update(f *sdk.Flow, u sdk.FlowUpdate) {
	if u.State != nil {
		f.State = u.State
	}
	if u.Wait != nil {
		f.Wait = u.Wait
	}
	set(&f.CurrentStep, u.CurrentStep)
	set(&f.BlockedTaskID, u.BlockedTaskID)
	set(&f.BlockedSummary, u.BlockedSummary)
}

func set(dst, v *string) {
	if v != nil {
		*dst = strings.TrimSpace(*v)
	}
}

// step records a current step given (trimmed); an empty one keeps f's.
func step(f *sdk.Flow, s string) {
	if s != "" {
		f.CurrentStep = strings.TrimSpace(s)
	}
}
