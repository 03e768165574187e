package store

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// guard runs fn, which calls into bbolt, and turns what a damaged page
// makes bbolt do into an error wrapping ErrCorrupt: a failed assertion or
// bad index inside bbolt (a panic), and a read outside the file's map,
// which would otherwise kill the process with SIGSEGV or SIGBUS
// (debug.SetPanicOnFault turns it into a panic for this goroutine while fn
// runs). bbolt rolls back the transaction it was in while the panic
// unwinds, so the store stays usable for the pages that are sound. Any
// other panic (a bug in fn, not damage) goes on unwinding.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !fromDamage(r) {
				panic(r)
			}
			err = damaged(path, r)
		}
	}()
	return fn()
}

// fromDamage reports whether the panic r, being recovered, was raised by
// reading a damaged file: a memory fault at an address (the map), or any
// panic raised inside bbolt. It must be called from the deferred function
// that recovers r, while the panicking frames are still on the stack.
func fromDamage(r any) bool {
	if _, ok := r.(interface{ Addr() uintptr }); ok {
		return true
	}
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(0, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// pageInPanic finds the page a bbolt assertion names.
var pageInPanic = regexp.MustCompile(`(?i)page[ :(]*(?:id)?[ :(]*(\d+)`)

// damaged describes a panic that reading the store at path raised.
func damaged(path string, r any) error {
	msg := fmt.Sprint(r)
	cause := fmt.Errorf("bbolt failed reading it: %s", firstLine(msg))
	if m := pageInPanic.FindStringSubmatch(msg); m != nil {
		cause = fmt.Errorf("damaged at page %s: %s", m[1], firstLine(msg))
	}
	return &corruptError{path: path, cause: cause, panicked: true}
}

// pageDamage reports whether err is what guard made of a panic.
func pageDamage(err error) bool {
	var ce *corruptError
	return errors.As(err, &ce) && ce.panicked
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
