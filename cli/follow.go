package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

// follower copies a task's output to the terminal as the attempt writes
// it, and shows progress and milestones: a live bar on a terminal, plain
// lines otherwise.
type follower struct {
	stdout, stderr io.Writer
	home, taskID   string

	attempt        int
	outOff, errOff int64
	lastSeq        int64 // the last milestone shown
	progress       string
	banner         string // the wake banner shown
	tty, bar       bool
}

func newFollower(stdout, stderr io.Writer, home, taskID string) *follower {
	return &follower{stdout: stdout, stderr: stderr, home: home, taskID: taskID, tty: isTerminal(stderr)}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// pump shows what is new since the last call.
func (f *follower) pump(t *apitype.Task) {
	if t.Attempts != f.attempt && t.Attempts > 0 {
		if f.attempt > 0 {
			f.copyOutput() // the rest of the previous attempt
			f.clearBar()
			fmt.Fprintf(f.stderr, "--- attempt %d of task %s ---\n", t.Attempts, t.ID)
		}
		f.attempt, f.outOff, f.errOff = t.Attempts, 0, 0
	}
	if s := t.Session; s != nil && s.Banner != "" && s.Banner != f.banner {
		f.clearBar()
		fmt.Fprintln(f.stderr, clean(s.Banner))
		f.banner = s.Banner
	}
	f.copyOutput()
	if p := progressLine(t.Progress); p != "" && p != f.progress {
		f.progress = p
		if !f.tty {
			fmt.Fprintf(f.stderr, "progress: %s\n", p)
		}
	}
	// By seq, not position: the record keeps only the first and latest
	// milestones, so positions shift once it is full.
	for _, m := range t.Milestones {
		if m.Seq <= f.lastSeq {
			continue
		}
		f.clearBar()
		fmt.Fprintf(f.stderr, "milestone %d: %s\n", m.Seq, clean(strings.TrimSpace(m.Name+" "+m.Message)))
		f.lastSeq = m.Seq
	}
	if f.tty && f.progress != "" && !t.Status.Terminal() {
		fmt.Fprintf(f.stderr, "\r\x1b[K%s", f.progress)
		f.bar = true
	}
}

// done clears the bar once the task ended.
func (f *follower) done(*apitype.Task) { f.clearBar() }

func (f *follower) clearBar() {
	if f.bar {
		fmt.Fprint(f.stderr, "\r\x1b[K")
		f.bar = false
	}
}

// copyOutput writes the bytes the attempt added to stdout and stderr.
func (f *follower) copyOutput() {
	if f.attempt == 0 {
		return
	}
	dir := gateway.TaskLogDir(f.home, f.taskID, f.attempt)
	// Only a drawn bar needs the look ahead: output must not land on it.
	if f.bar && (f.hasNew(filepath.Join(dir, "stdout"), f.outOff) || f.hasNew(filepath.Join(dir, "stderr"), f.errOff)) {
		f.clearBar()
	}
	f.outOff += copyFrom(f.stdout, filepath.Join(dir, "stdout"), f.outOff)
	f.errOff += copyFrom(f.stderr, filepath.Join(dir, "stderr"), f.errOff)
}

func (f *follower) hasNew(path string, off int64) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > off
}

// copyFrom copies the file at path from offset off to w, up to the end
// it had when opened (it may still grow), and returns how many bytes it
// copied. A missing file copies nothing, and so does one that is not a
// regular file (a task's named pipe or link to /dev/zero, see
// shim.OpenTaskFile), which could block or never end.
func copyFrom(w io.Writer, path string, off int64) int64 {
	file, err := gateway.OpenTaskFile(path)
	if err != nil {
		return 0
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || fi.Size() <= off {
		return 0
	}
	n, _ := io.Copy(w, io.NewSectionReader(file, off, fi.Size()-off)) // a short copy is caught up on the next call
	return n
}

// progressLine renders a progress snapshot as one line with a bar.
func progressLine(p *sdk.Progress) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	if p.Fraction != nil {
		frac := min(max(*p.Fraction, 0), 1)
		filled := int(frac * 20)
		fmt.Fprintf(&b, "[%s%s] %3.0f%%", strings.Repeat("#", filled), strings.Repeat("-", 20-filled), frac*100)
	}
	for _, s := range []string{p.Phase, p.Message} {
		if s = strings.TrimSpace(s); s != "" {
			if b.Len() > 0 {
				b.WriteString(" ")
			}
			b.WriteString(clip(s, 60))
		}
	}
	return b.String()
}
