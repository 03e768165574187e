package flows

import (
	"fmt"
	"io"
	"os"
)

// Size limits of a workflow. They keep loading cheap (a file's parse
// takes memory many times its size) and keep every task a workflow makes
// within what a task record holds.
const (
	// MaxFileBytes bounds a workflow file, and each sub-workflow file.
	MaxFileBytes = 256 << 10
	// MaxRunBytes bounds one run: (or command:) line as written, before
	// templating. Longer scripts belong in a file the step runs.
	MaxRunBytes = 64 << 10
)

// fileTooLarge is the refusal of workflow data n bytes long, or nil when
// n is within MaxFileBytes.
func fileTooLarge(name string, n int64) *Error {
	if n <= MaxFileBytes {
		return nil
	}
	return &Error{File: name, Msg: fmt.Sprintf("workflow file is %d bytes; at most %d are allowed (move data into files the steps read)", n, MaxFileBytes)}
}

// readFile reads the workflow file at path, refusing one over
// MaxFileBytes before reading it.
func readFile(path, name string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: name, Msg: fmt.Sprintf("cannot read workflow file: %v", err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		if e := fileTooLarge(name, fi.Size()); e != nil {
			return nil, e
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &Error{File: name, Msg: fmt.Sprintf("cannot read workflow file: %v", err)}
	}
	return data, nil
}

// checkRunSizes reports run: lines over MaxRunBytes.
func (d *decoder) checkRunSizes(wf *Workflow) {
	check := func(key string, line, col int, run string) {
		if len(run) > MaxRunBytes {
			d.errAtKey(key, line, col, "run is %d bytes; at most %d are allowed (put the script in a file and run it)", len(run), MaxRunBytes)
		}
	}
	for i, s := range wf.Steps {
		key := fmt.Sprintf("steps[%d]", i)
		check(key+".run", s.Line, s.Column, s.Run)
		if s.Parallel != nil {
			for j, b := range s.Parallel.Branches {
				check(fmt.Sprintf("%s.parallel.branches[%d].run", key, j), b.Line, b.Column, b.Run)
			}
		}
		if s.ForEach != nil {
			for j, sub := range s.ForEach.Steps {
				check(fmt.Sprintf("%s.for_each.steps[%d].run", key, j), sub.Line, sub.Column, sub.Run)
			}
		}
	}
}
