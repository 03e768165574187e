package flows_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// TestStagesMatchLobsterBytes runs each case of testdata/lobster/cases.txt
// over input.json and compares what it prints, byte for byte, with what
// real Lobster printed for the same stages (captured by capture.sh in
// that directory): keys in source order (array-index keys first), dedupe
// and groupBy telling {a,b} from {b,a}, renderers' text, and
// JSON.stringify's escaping.
func TestStagesMatchLobsterBytes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "lobster")
	input, err := os.ReadFile(filepath.Join(dir, "input.json"))
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, "cases.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		name, text, ok := strings.Cut(sc.Text(), "\t")
		require.True(t, ok, "cases.txt: %q has no tab", sc.Text())
		n++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(dir, name+".golden"))
			require.NoError(t, err)
			v, err := flows.DecodeJSON(input)
			require.NoError(t, err)
			stages, err := flows.ParsePipeline(text)
			require.NoError(t, err)
			var out strings.Builder
			res, err := flows.RunPipeline(context.Background(), stages, 0, v.([]any), flows.Builtins(), &out)
			require.NoError(t, err)
			got := out.String()
			if !res.Rendered {
				got = flows.StringifyIndent(res.Items, "  ") + "\n"
			}
			require.Equal(t, string(want), got)
		})
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, n, 10)
}

// TestEmailTriageMatchesLobsterBytes runs email.triage over emails.json
// (messages with and without ids, UNREAD labels, no-reply senders,
// urgent subjects, and items that are no objects) with the flags of each
// email_triage*.golden and compares the bytes with real Lobster's.
func TestEmailTriageMatchesLobsterBytes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "lobster")
	input, err := os.ReadFile(filepath.Join(dir, "emails.json"))
	require.NoError(t, err)
	for name, text := range map[string]string{
		"email_triage":             "email.triage",
		"email_triage_limit_2":     "email.triage --limit 2",
		"email_triage_limit_0":     "email.triage --limit 0",
		"email_triage_emit_drafts": "email.triage --emit drafts",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(dir, name+".golden"))
			require.NoError(t, err)
			v, err := flows.DecodeJSON(input)
			require.NoError(t, err)
			stages, err := flows.ParsePipeline(text)
			require.NoError(t, err)
			res, err := flows.RunPipeline(context.Background(), stages, 0, v.([]any), flows.Builtins(), nil)
			require.NoError(t, err)
			require.Equal(t, string(want), flows.StringifyIndent(res.Items, "  ")+"\n")
		})
	}
}
