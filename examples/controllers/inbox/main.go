// Command inbox is a controller plugin that is its own source of work: it
// watches a directory, creates one flow per file that arrives there, runs
// one task that counts the file's bytes, and moves the file to done/ when
// its flow succeeds. See README.md for how to build and use it.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

type inbox struct {
	dir   string        // the directory watched; done/ is under it
	owner string        // the owner of the flows it creates
	poll  time.Duration // how often it looks
}

// file is the state of a flow: the file it is for.
type file struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Count  string `json:"count,omitempty"` // the task's output, once done
}

func (inbox) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "inbox", Version: "1.0.0", APIVersion: sdk.APIVersion, Watch: true}, nil
}

func (inbox) Shutdown(context.Context) error { return nil }

// Watch looks at the directory every poll until the gateway stops it. A
// file's flow is keyed by its name and digest, so a file seen again after
// any crash names the flow made for it the first time.
func (b inbox) Watch(ctx context.Context, h sdk.Host) error {
	t := time.NewTicker(b.poll)
	defer t.Stop()
	for {
		if err := b.scan(ctx, h); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// scan makes sure every file in the directory has its flow, and moves the
// file of a flow that succeeded (its HandleEvent may have been cut short
// before the move).
func (b inbox) scan(ctx context.Context, h sdk.Host) error {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		// Names starting with a dot are files still being written: drop
		// a file by writing .name and renaming it to name.
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sum, err := digest(filepath.Join(b.dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // moved to done/ since ReadDir
		} else if err != nil {
			return err
		}
		state, _ := json.Marshal(file{Name: e.Name(), SHA256: sum})
		f, _, err := h.CreateFlow(ctx, sdk.FlowRequest{
			IdempotencyKey: e.Name() + ":" + sum, Goal: "process " + e.Name(), OwnerKey: b.owner,
			State: state, Labels: map[string]string{"inbox.file": e.Name()},
		})
		if errors.Is(err, sdk.ErrResourceExhausted) {
			return nil // at the gateway's cap: the rest wait for the next scan
		} else if err != nil {
			return err
		}
		if f.Status == sdk.FlowSucceeded {
			if err := b.moveDone(e.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}

// HandleEvent runs the file's one task, then finishes the flow and moves
// the file to done/. Events come at least once: the task has an
// idempotency key, and the move is repeated harmlessly.
func (b inbox) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	flow, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil {
		return err
	}
	var st file
	_ = json.Unmarshal(flow.State, &st) // a flow with no file is ended below
	if flow.Status == sdk.FlowSucceeded && st.Name != "" {
		return b.moveDone(st.Name)
	}
	if flow.Status.Terminal() || (ev.Type != sdk.EventFlowStarted && ev.Type != sdk.EventTaskFinished) {
		return nil
	}
	if st.Name == "" { // started for inbox by someone else
		_, err := h.Fail(ctx, flow.ID, flow.Revision, sdk.EndRequest{BlockedSummary: "inbox drives only the flows it creates for the files in INBOX_DIR"})
		return err
	}
	tasks, err := h.ListTasks(ctx, flow.ID)
	if err != nil {
		return err
	}
	if len(tasks) == 0 {
		if flow.Status == sdk.FlowQueued {
			if flow, err = h.Resume(ctx, flow.ID, flow.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning}); err != nil {
				return err
			}
		}
		_, _, err := h.CreateTask(ctx, sdk.TaskRequest{
			FlowID: flow.ID, IdempotencyKey: flow.ID + ":count", Label: "count " + st.Name,
			Spec: sdk.TaskSpec{Argv: []string{"wc", "-c", filepath.Join(b.dir, st.Name)}},
		})
		return err
	}
	t := tasks[0]
	switch {
	case t.Status == sdk.TaskSucceeded:
		st.Count = strings.TrimSpace(t.Result.Summary)
		state, _ := json.Marshal(st)
		if _, err := h.Finish(ctx, flow.ID, flow.Revision, sdk.EndRequest{State: state}); err != nil {
			return err
		}
		return b.moveDone(st.Name)
	case t.Status.Terminal():
		_, err := h.Fail(ctx, flow.ID, flow.Revision, sdk.EndRequest{BlockedTaskID: t.ID, BlockedSummary: t.Title() + " " + string(t.Status)})
		return err
	}
	return nil // the task is still running; its task.finished comes later
}

// moveDone moves a file to done/; a file already moved is left there.
func (b inbox) moveDone(name string) error {
	done := filepath.Join(b.dir, "done")
	if err := os.MkdirAll(done, 0o755); err != nil {
		return err
	}
	err := os.Rename(filepath.Join(b.dir, name), filepath.Join(done, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// digest is the SHA-256 of a file's bytes, in hex.
func digest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func main() {
	dir, err := filepath.Abs(os.Getenv("INBOX_DIR"))
	if os.Getenv("INBOX_DIR") == "" || err != nil {
		fmt.Fprintln(os.Stderr, "inbox: set INBOX_DIR to the directory to watch (in the plugin's env: in gateway.yaml)")
		os.Exit(2)
	}
	owner := os.Getenv("INBOX_OWNER")
	if owner == "" {
		owner = "inbox"
	}
	poll, err := time.ParseDuration(os.Getenv("INBOX_POLL"))
	if err != nil || poll <= 0 {
		poll = time.Second
	}
	sdk.Serve(inbox{dir: dir, owner: owner, poll: poll})
}
