package shim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec shim.Spec
		want string // empty: valid
	}{
		{"argv", shim.Spec{Argv: []string{"true"}}, ""},
		{"shell", shim.Spec{Shell: "true", Cwd: "/tmp", StdinPath: "/dev/null"}, ""},
		{"both", shim.Spec{Argv: []string{"true"}, Shell: "true"}, "argv and shell are both set"},
		{"neither", shim.Spec{}, "neither argv nor shell"},
		{"empty argv[0]", shim.Spec{Argv: []string{""}}, "argv[0] is empty"},
		{"negative timeout", shim.Spec{Shell: "true", Timeout: dur(-time.Second)}, "must not be negative"},
		{"no_progress without a file", shim.Spec{Shell: "true", NoProgress: dur(time.Second)}, "progress_path is empty"},
		{"relative cwd", shim.Spec{Shell: "true", Cwd: "work"}, `cwd "work" is not an absolute path`},
		{"relative stdin", shim.Spec{Shell: "true", StdinPath: "in"}, "stdin_path"},
		{"relative progress", shim.Spec{Shell: "true", ProgressPath: "p.jsonl"}, "progress_path"},
		{"bad env name", shim.Spec{Shell: "true", Env: map[string]string{"A=B": "c"}}, `env name "A=B"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.spec.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, shim.WriteSpec(t.TempDir(), tc.spec), tc.want, "WriteSpec validates")
		})
	}
}

func TestSpecRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := shim.Spec{
		TaskID: "t", FlowID: "f", Attempt: 3, Argv: []string{"a", "b"},
		Env: map[string]string{"K": "V"}, Cwd: "/", ProgressPath: "/p",
		Timeout: dur(time.Minute), NoProgress: dur(time.Second), Grace: dur(2 * time.Second),
		Deadline: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	require.NoError(t, shim.WriteSpec(dir, in))
	out, err := shim.ReadSpec(dir)
	require.NoError(t, err)
	require.Equal(t, in, out)
	require.Equal(t, shim.DefaultGrace, time.Duration(shim.Spec{}.WithDefaults().Grace))
}
