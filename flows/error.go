package flows

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Error is one problem found while loading or validating a workflow file.
// Load and Parse return several of them joined with errors.Join, ordered by
// file, line, column and key, so callers can range over them with
// errors.As or print the joined error as one problem per line.
type Error struct {
	// File is the workflow file (the name given to Parse, or the path given
	// to Load or found in a parent's workflow: key).
	File string
	// Line and Column locate the offending key or value, 1-based. Zero
	// means the position is unknown (an empty file, for instance).
	Line, Column int
	// Key is the dotted path of the offending key, e.g. "steps[2].timeout_ms".
	// Empty for problems with the file as a whole.
	Key string
	// Msg is the message; for structural problems it is the message the
	// reference implementation prints (lobster-format §3.3).
	Msg string
}

// Error formats the problem as "file:line:col: key: msg".
func (e *Error) Error() string {
	s := fmt.Sprintf("%s:%d:%d: ", e.File, e.Line, e.Column)
	if e.Key != "" {
		s += e.Key + ": "
	}
	return s + e.Msg
}

// errList collects problems for one load.
type errList []*Error

func (l *errList) add(file string, line, col int, key, format string, args ...any) {
	*l = append(*l, &Error{File: file, Line: line, Column: col, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// err sorts the problems into a deterministic order and joins them; nil if
// there are none.
func (l errList) err() error {
	if len(l) == 0 {
		return nil
	}
	sorted := slices.Clone(l)
	slices.SortStableFunc(sorted, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column), cmp.Compare(a.Key, b.Key))
	})
	sorted = slices.CompactFunc(sorted, func(a, b *Error) bool { return *a == *b })
	errs := make([]error, len(sorted))
	for i, e := range sorted {
		errs[i] = e
	}
	return errors.Join(errs...)
}
