package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// Progress file reading limits: a line longer than maxProgressLine is
// skipped as malformed; one read takes at most maxProgressRead bytes, and
// the reads that catch up with an ended task's file at most
// maxProgressReads of them.
const (
	maxProgressLine  = 64 << 10
	maxProgressRead  = 1 << 20
	maxProgressReads = 64
)

// progressLine is one line a task appends to $FLOWGATE_PROGRESS.
type progressLine struct {
	Fraction  *float64        `json:"fraction"`
	Phase     string          `json:"phase"`
	Message   string          `json:"message"`
	Data      json.RawMessage `json:"data"`
	Milestone string          `json:"milestone"`
	Blocked   string          `json:"blocked"`
	Usage     *usageLine      `json:"usage"`
	// SessionID and ContextTokens report the agent's session.
	SessionID     string `json:"session_id"`
	ContextTokens *int64 `json:"context_tokens"`
}

// reportsProgress says l carries a progress snapshot or a milestone, not
// only a session or usage report.
func (l *progressLine) reportsProgress() bool {
	return l.Fraction != nil || l.Phase != "" || l.Message != "" || l.Data != nil || l.Milestone != ""
}

// usageLine is the usage one line reports: the tokens and cost of the
// calls made since the last report. Each field may be left out.
type usageLine struct {
	InputTokens  *int64   `json:"input_tokens"`
	OutputTokens *int64   `json:"output_tokens"`
	Cost         *float64 `json:"cost"`
}

// usage converts l, refusing negative values.
func (l *usageLine) usage() (*sdk.Usage, bool) {
	var u sdk.Usage
	for _, n := range []*int64{l.InputTokens, l.OutputTokens} {
		if n != nil {
			if *n < 0 {
				return nil, false
			}
			u.TokenReports = 1
		}
	}
	if l.InputTokens != nil {
		u.InputTokens = *l.InputTokens
	}
	if l.OutputTokens != nil {
		u.OutputTokens = *l.OutputTokens
	}
	if c := l.Cost; c != nil {
		if *c < 0 {
			return nil, false
		}
		u.Cost, u.CostReports = *c, 1
	}
	return &u, true
}

// readProgress reads the complete lines of the progress file at path
// from offset from, and returns what they say as an engine input. A file
// that does not exist yet reads as nothing new; one that is not a regular
// file is refused with an error wrapping shim.ErrNotRegular (see
// shim.OpenTaskFile). The latest snapshot wins; milestones are all kept,
// in order; malformed lines are counted. Reading stops after a line that
// reports a session, so that the session is recorded before the lines
// after it.
func readProgress(path string, from int64) (engine.ProgressInput, error) {
	in := engine.ProgressInput{From: from, To: from}
	f, err := shim.OpenTaskFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return in, nil
	}
	if err != nil {
		return in, err
	}
	defer f.Close()
	// An offset that is not at the start of a line is inside an over-long
	// line that an earlier read skipped in part, and counted.
	inLong := false
	if from > 0 {
		var prev [1]byte
		if _, err := f.ReadAt(prev[:], from-1); errors.Is(err, io.EOF) {
			return in, nil
		} else if err != nil {
			return in, err
		}
		inLong = prev[0] != '\n'
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return in, err
	}
	r := bufio.NewReaderSize(io.LimitReader(f, maxProgressRead), maxProgressLine)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || inLong {
			// An over-long line, or the rest of one: skip what there is
			// of it and count it once. A line longer than one read, or
			// not all written yet, is skipped over several reads.
			n := int64(len(line))
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				n += int64(len(line))
			}
			in.To += n
			if !inLong {
				in.Malformed++
			}
			inLong = false
			if err != nil {
				return in, nil
			}
			continue
		}
		if err != nil {
			return in, nil // EOF or a partial last line: read it next time
		}
		in.To += int64(len(line))
		parseProgressLine(bytes.TrimSpace(line), &in)
		if in.Session != nil {
			return in, nil // recorded on its own, before any later line
		}
	}
}

func parseProgressLine(b []byte, in *engine.ProgressInput) {
	if len(b) == 0 {
		return
	}
	var l progressLine
	if err := json.Unmarshal(b, &l); err != nil || (l.Fraction != nil && !(*l.Fraction >= 0 && *l.Fraction <= 1)) {
		in.Malformed++
		return
	}
	if l.SessionID != "" || l.ContextTokens != nil {
		if l.ContextTokens != nil && *l.ContextTokens < 0 {
			in.Malformed++
			return
		}
		in.Session = &engine.SessionReport{ID: strings.TrimSpace(l.SessionID)}
		if l.ContextTokens != nil {
			in.Session.ContextTokens = *l.ContextTokens
		}
		if l.Usage == nil && !l.reportsProgress() {
			return // a session line only
		}
	}
	if l.Usage != nil {
		u, ok := l.Usage.usage()
		if !ok {
			in.Malformed++
			return
		}
		in.Usage = in.Usage.Add(u)
		if !l.reportsProgress() {
			return // a usage line only: the progress snapshot stays
		}
	}
	if reason := strings.TrimSpace(l.Blocked); reason != "" {
		in.Blocked = reason
		if !l.reportsProgress() {
			return // a blocked line only: the progress snapshot stays
		}
	}
	if name := strings.TrimSpace(l.Milestone); name != "" {
		in.Milestones = append(in.Milestones, sdk.Milestone{Name: name, Message: l.Message, Data: l.Data})
		return
	}
	in.Progress = &sdk.Progress{Fraction: l.Fraction, Phase: l.Phase, Message: l.Message, Data: l.Data}
}

// empty reports whether in carries nothing to record.
func progressEmpty(in engine.ProgressInput) bool { return in.To == in.From }
