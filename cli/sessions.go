package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

func newSessionsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "Show and archive agent session lineages",
		Long: `A lineage is what flowgate keeps of a named session (tasks run --session,
a pipeline's session, a cron job's session:NAME) in one workspace: the
agent session each step continues, how often it woke, and the latest wake
banner. Archiving moves it (and the session's notes directory) aside under
archive/<timestamp>/; nothing is ever deleted. See docs/agents.md.`,
	}
	cmd.AddCommand(newSessionsListCmd(e), newSessionsShowCmd(e), newSessionsArchiveCmd(e))
	return cmd
}

func newSessionsListCmd(e *env) *cobra.Command {
	var asJSON, archived bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the live lineages (with --archived, the archived ones too)",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				ls, err := c.Lineages(ctx, "", archived)
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(nonNil(ls), func(w io.Writer) { writeLineages(w, ls) })
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lineages as JSON")
	cmd.Flags().BoolVar(&archived, "archived", false, "list the archived lineages too")
	return cmd
}

func newSessionsShowCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show every lineage of one session, archived ones included",
		Args:  args(1, "one session name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := checkSessionName(a[0]); err != nil {
				return err
			}
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				ls, err := c.Lineages(ctx, a[0], true)
				if err != nil {
					return err
				}
				if len(ls) == 0 {
					return fmt.Errorf("%w: session %s has no lineage; list them with flowgate sessions list", sdk.ErrNotFound, a[0])
				}
				return printer{e.stdout, asJSON}.emit(ls, func(w io.Writer) {
					for _, l := range ls {
						writeLineage(w, l)
					}
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lineages as JSON")
	return cmd
}

func newSessionsArchiveCmd(e *env) *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "archive NAME",
		Short: "Archive a session's lineage and notes; its next run starts fresh",
		Args:  args(1, "one session name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			ws, err := workspacePath(workspace)
			if err != nil {
				return err
			}
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				l, err := e.archiveSession(ctx, c, a[0], ws)
				if err != nil {
					return err
				}
				if l == nil {
					fmt.Fprintf(e.stdout, "Session %s has no live lineage in %s; its next run starts fresh.\n", a[0], ws)
					return nil
				}
				fmt.Fprintf(e.stdout, "Archived session %s in %s (%d wakes); its next run starts fresh.\n", a[0], ws, l.Wakes)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "the workspace the lineage belongs to (default: the current directory)")
	return cmd
}

// checkSessionName refuses a name no session can have.
func checkSessionName(name string) error {
	if !api.ValidSessionName(name) {
		return usageError{fmt.Errorf("session %q is not a name: use letters, digits, '.', '_' or '-', at most 64", name)}
	}
	return nil
}

// workspacePath is dir made absolute, the current directory when empty.
func workspacePath(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageError{fmt.Errorf("--workspace %s: %w", dir, err)}
	}
	return abs, nil
}

// archiveSession archives session name's lineage in workspace and moves
// the session's notes directory (everything in it but archive/) under
// its archive/<timestamp>/.
func (e *env) archiveSession(ctx context.Context, c api.Client, name, workspace string) (*sdk.Lineage, error) {
	if err := checkSessionName(name); err != nil {
		return nil, err
	}
	l, err := c.ArchiveLineage(ctx, api.ArchiveLineageRequest{Name: name, Workspace: workspace})
	if err != nil {
		return nil, err
	}
	dir, err := e.home()
	if err != nil {
		return l, err
	}
	return l, archiveNotes(gateway.SessionDir(dir, name), time.Now())
}

// archiveNotes moves what dir holds, but its archive/, to
// archive/<timestamp>/ inside it. A missing or empty dir has nothing to
// move.
func archiveNotes(dir string, now time.Time) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("archive the session notes in %s: %w", dir, err)
	}
	dest := filepath.Join(dir, "archive", now.UTC().Format("20060102T150405.000000000Z"))
	for _, en := range entries {
		if en.Name() == "archive" {
			continue
		}
		if err := os.MkdirAll(dest, 0o700); err != nil {
			return fmt.Errorf("archive the session notes: %w", err)
		}
		if err := os.Rename(filepath.Join(dir, en.Name()), filepath.Join(dest, en.Name())); err != nil {
			return fmt.Errorf("archive the session notes: %w", err)
		}
	}
	return nil
}

func nonNil(ls []sdk.Lineage) []sdk.Lineage {
	if ls == nil {
		return []sdk.Lineage{}
	}
	return ls
}

func writeLineages(w io.Writer, ls []sdk.Lineage) {
	fmt.Fprintf(w, "Sessions: %d\n", len(ls))
	if len(ls) == 0 {
		return
	}
	var tb table
	tb.add("NAME", "WAKES", "STEPS", "UPDATED", "STATE", "WORKSPACE")
	for _, l := range ls {
		state := "live"
		if !l.ArchivedAt.IsZero() {
			state = "archived " + stamp(l.ArchivedAt)
		}
		tb.add(clean(l.Name), strconv.Itoa(l.Wakes), strconv.Itoa(len(l.Steps)), stamp(l.UpdatedAt), state, clean(l.Workspace))
	}
	tb.write(w)
}

func writeLineage(w io.Writer, l sdk.Lineage) {
	fmt.Fprintln(w, "Session:")
	var tb table
	row := func(k, v string) { tb.add("  "+k+":", v) }
	row("name", clean(l.Name))
	row("workspace", clean(l.Workspace))
	row("wakes", strconv.Itoa(l.Wakes))
	if l.ArchivedAt.IsZero() {
		row("state", "live")
	} else {
		row("state", "archived "+stamp(l.ArchivedAt))
	}
	row("banner", orNA(clean(l.Banner)))
	row("updated", stamp(l.UpdatedAt))
	steps := make([]string, 0, len(l.Steps))
	for name, s := range l.Steps {
		steps = append(steps, fmt.Sprintf("%s=%s (task %s)", clean(name), orNA(clean(s.SessionID)), s.TaskID))
	}
	slices.Sort(steps)
	row("steps", orNA(strings.Join(steps, "; ")))
	tb.write(w)
}

// sessionRows adds the rows of tasks show about the task's agent session:
// the lineage it belongs to, the session, and the wake banner (kept on
// the task: it is this run's record of the wake).
func sessionRows(row func(k, v string), t *apitype.Task) {
	if ss := t.Spec.Session; ss != nil {
		row("lineage", clean(ss.Name+" step "+ss.StepName()))
	}
	s := t.Session
	if s == nil {
		return
	}
	switch {
	case s.Resumed && s.Interrupted:
		row("session", clean(s.ID)+" (continued an interrupted run: resume prompt)")
	case s.Resumed:
		row("session", clean(s.ID)+" (continued)")
	default:
		row("session", orNA(clean(s.ID)))
	}
	if s.ContextTokens > 0 {
		row("contextTokens", strconv.FormatInt(s.ContextTokens, 10))
	}
	if s.Banner != "" {
		row("wakeBanner", clean(s.Banner))
	}
}
