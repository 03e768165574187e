package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runIn runs the flowgate binary bin in dir with args and returns its
// exit code, stdout and stderr; a run over two minutes fails the test.
func runIn(t *testing.T, bin, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "flowgate %v: %s", args, e.String())
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), o.String(), e.String()
	}
	require.NoError(t, err)
	return 0, o.String(), e.String()
}

// noFile fails the test if dir holds name.
func noFile(t *testing.T, dir, name, why string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, name))
	require.True(t, os.IsNotExist(err), "%s: %s was created", why, name)
}

// TestStrictRefsRefusesRefsInPipelines: a workflow with strict_refs: true
// whose pipeline: pastes an arg or a step's output is refused at load,
// with file:line, by pipeline validate and pipeline run, and nothing
// runs; --strict-refs refuses the same file without the key. The quoted
// environment variable is the way that works.
func TestStrictRefsRefusesRefsInPipelines(t *testing.T) {
	t.Parallel()
	bin := buildFlowgate(t)
	home, work, _ := e2eDirs(t)
	const body = `args:
  name: {default: world}
steps:
  - id: s1
    run: echo hi
  - id: greet
    pipeline: exec --shell "echo ${name}"
  - id: again
    pipeline: exec --shell "echo $s1.stdout"
`
	strict := filepath.Join(work, "strict.lobster")
	require.NoError(t, os.WriteFile(strict, []byte("strict_refs: true\n"+body), 0o600))
	loose := filepath.Join(work, "loose.lobster")
	require.NoError(t, os.WriteFile(loose, []byte(body), 0o600))
	inject := `{"name":"$(touch pwned)"}`

	for _, tc := range []struct {
		what string
		args []string
		at   string
	}{
		{"validate of a strict file", []string{"pipeline", "validate", strict}, strict + ":7:5: steps[1].pipeline: step greet pastes ${name} into its pipeline"},
		{"validate --strict-refs", []string{"pipeline", "validate", "--strict-refs", loose}, loose + ":6:5: step greet pastes ${name} into its pipeline"},
		{"run of a strict file", []string{"pipeline", "run", strict, "--args-json", inject}, strict + ":7:5: steps[1].pipeline: step greet pastes ${name} into its pipeline"},
		{"run --strict-refs", []string{"pipeline", "run", "--strict-refs", loose, "--args-json", inject}, loose + ":6:5: step greet pastes ${name} into its pipeline"},
	} {
		code, _, errOut := runIn(t, bin, work, append([]string{"--home", home}, tc.args...)...)
		require.Equal(t, 2, code, "%s: %s", tc.what, errOut)
		require.Contains(t, errOut, tc.at, tc.what)
		require.Contains(t, errOut, "step again pastes $s1.stdout into its pipeline", tc.what)
		noFile(t, work, "pwned", tc.what)
	}

	safe := filepath.Join(work, "safe.lobster")
	require.NoError(t, os.WriteFile(safe, []byte(`strict_refs: true
args:
  name: {default: world}
steps:
  - id: s1
    run: printf '%s' '$(touch pwned2)'
  - id: greet
    pipeline: exec --shell 'printf "%s|%s" "$LOBSTER_ARG_NAME" "$LOBSTER_STEP_S1_STDOUT"'
`), 0o600))
	code, out, errOut := runIn(t, bin, work, "--home", home, "pipeline", "run", safe, "--args-json", inject)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "$(touch pwned)|$(touch pwned2)", "a pipeline reads values from its environment")
	noFile(t, work, "pwned", "the quoted variable")
	noFile(t, work, "pwned2", "the quoted step variable")
}

// TestValuesCannotAddPipelineStages: without strict_refs, refs are
// resolved after the pipeline is parsed, so an arg or a step's output
// that closes a quote and writes "| exec …" lands inside the one word it
// was written in and adds no stage. Inside an exec --shell line a value
// is still shell code, as documented: validate warns about it.
func TestValuesCannotAddPipelineStages(t *testing.T) {
	t.Parallel()
	bin := buildFlowgate(t)
	home, work, _ := e2eDirs(t)
	wf := filepath.Join(work, "loose.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`args:
  name: {default: world}
  code: {default: "$(touch pasted)"}
steps:
  - id: pasted
    pipeline: exec --shell "echo ${code}"
  - id: s1
    run: printf '%s' 'y" | exec --shell "touch pwned2'
  - id: shell
    pipeline: exec --shell "echo ${name}"
  - id: out
    pipeline: exec --shell "echo $s1.stdout"
  - id: argv
    pipeline: exec printf %s ${name}
`), 0o600))
	code, out, errOut := runIn(t, bin, work, "--home", home, "pipeline", "run", wf,
		"--args-json", `{"name":"x\" | exec --shell \"touch pwned"}`)
	require.Equal(t, 0, code, errOut)
	noFile(t, work, "pwned", "an arg that closes the quote")
	noFile(t, work, "pwned2", "a step output that closes the quote")
	require.Contains(t, out, `x\" | exec --shell \"touch pwned`, "without a shell the value is one argument, as it was given")
	_, err := os.Stat(filepath.Join(work, "pasted"))
	require.NoError(t, err, "a value in an exec --shell line is shell code, as in run:")

	code, _, errOut = runIn(t, bin, work, "--home", home, "pipeline", "validate", wf)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "warning: "+wf+":5:5: step pasted pastes ${code} into its pipeline")
	require.Contains(t, errOut, "step shell pastes ${name} into its pipeline")
	require.Contains(t, errOut, "step out pastes $s1.stdout into its pipeline")
}
