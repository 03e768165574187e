package cli_test

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
)

// An unknown subcommand of any command group exits 2, naming it, the
// group and the valid subcommands, so a script can tell a typo from
// success; the group alone still prints its help and exits 0.
func TestUnknownSubcommandExitsTwo(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, _, errOut := run(t, home, "plugins", "bogus", "x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown command "bogus" for "flowgate plugins"; valid commands: check, list, new, reload, test`)
	code, _, errOut = run(t, home, "tasks", "flow", "bogus")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown command "bogus" for "flowgate tasks flow"; valid commands: approve, cancel, continue, create`)

	var groups []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() {
			groups = append(groups, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.NewRoot(strings.NewReader(""), io.Discard, io.Discard))
	require.GreaterOrEqual(t, len(groups), 6)
	for _, g := range groups {
		path := strings.Fields(g.CommandPath())[1:]
		code, _, errOut := run(t, home, append(path, "no-such-command")...)
		require.Equal(t, 2, code, "%s: %s", g.CommandPath(), errOut)
	}
	for _, group := range []string{"", "cron", "pipeline", "tasks flow", "plugins"} {
		code, _, errOut := run(t, home, append(strings.Fields(group), "no-such-command")...)
		require.Equal(t, 2, code, "%s: %s", group, errOut)
		require.Contains(t, errOut, `unknown command "no-such-command" for "`+strings.TrimSpace("flowgate "+group)+`"; valid commands: `)
	}
	code, out, _ := run(t, home, "plugins")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Available Commands:")
}

// "flowgate version" prints the module version, the commit and the Go
// version; "flowgate completion SHELL" prints cobra's completion script.
func TestVersionAndCompletion(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, out, _ := run(t, home, "version")
	require.Equal(t, 0, code)
	require.Regexp(t, `^flowgate \S+\ncommit   \S+.*\ngo       go1\.\S+ \w+/\w+\n$`, out)
	for shell, marker := range map[string]string{"bash": "bash completion V2 for flowgate", "zsh": "#compdef flowgate", "fish": "fish completion for flowgate"} {
		code, out, errOut := run(t, home, "completion", shell)
		require.Equal(t, 0, code, "%s: %s", shell, errOut)
		require.Contains(t, out, marker, shell)
	}
	code, _, errOut := run(t, home, "completion", "tcsh")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown command "tcsh" for "flowgate completion"`)
}
