package flows_test

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTemplateStage(t *testing.T) {
	t.Parallel()
	item := `[{"n":1,"t":" Hi There ","s":"a,b,c","l":["x","y",null],"nul":null,"e":"","z":0,"f":false,"x":2.5,"ms":86400000,"iso":"2026-03-04T05:06:07Z","o":{"k":"v"}}]`
	tpl := t.TempDir() + "/t.txt"
	if err := os.WriteFile(filepath.Clean(tpl), []byte("file {{n}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	runStageCases(t, []stageCase{
		{"paths", "template --text 'n={{n}} o={{o.k}} whole={{.}}'", `[{"n":1,"o":{"k":"v"}}]`, `["n=1 o=v whole={\"n\":1,\"o\":{\"k\":\"v\"}}"]`},
		{"this and missing", "template '{{this}}|{{nope}}|'", `["s"]`, `["s||"]`},
		{"positional text joined", "template a {{n}} b", item, `["a 1 b"]`},
		{"file", "template --file " + tpl, item, `["file 1"]`},
		{"upper lower trim", "template '{{t | upper}}/{{t | lower}}/{{t | trim}}'", item, `[" HI THERE / hi there /Hi There"]`},
		{"truncate", "template '{{t | truncate 3}}|{{s | truncate}}'", item, `[" Hi...|a,b,c"]`},
		{"replace split first last length", `template '{{s | replace "," "-"}} {{s | split | first}} {{s | split "," | last}} {{s | split | length}} {{t | length}}'`, item, `["a-b-c a c 3 10"]`},
		// A filter argument in quotes may hold the | that separates filters.
		{"quoted pipe in filter", `template '{{s | replace "," "|"}}'`, item, `["a|b|c"]`},
		{"join", `template '{{l | join}}/{{l | join "+"}}/{{n | join}}'`, item, `["x, y, /x+y+/1"]`},
		{"json and string", "template '{{o | json}}|{{nul | string}}|{{n | string}}'", item, "[\"{\\n  \\\"k\\\": \\\"v\\\"\\n}||1\"]"},
		// default replaces "", null and missing, not 0 or false.
		{"default", "template '{{e | default d}} {{nul | default d}} {{nope | default d}} {{z | default d}} {{f | default d}}'", item, `["d d d 0 false"]`},
		// round: halves away from zero; non-numbers unchanged.
		{"round", "template '{{x | round}} {{t | round}} {{n | round 2}}'", `[{"x":-2.5,"t":"abc","n":1.005}]`, `["-3 abc 1"]`},
		{"round half up", "template '{{x | round}}'", `[{"x":2.5}]`, `["3"]`},
		{"date", "template '{{ms | date}} {{iso | date YYYY/MM/DD-HH:mm:ss}} {{t | date}}'", item, `["1970-01-02T00:00:00.000Z 2026/03/04-05:06:07  Hi There "]`},
		{"unknown filter", "template '{{n | shout}}'", item, "error: Unknown template filter: shout"},
		{"requires text", "template", item, "error: template requires --text or --file (or positional text)"},
	})
}

func TestRendererStages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, pipeline, input, want string }{
		{"json", "json", `[{"a":"<b>"},1]`, "[\n  {\n    \"a\": \"<b>\"\n  },\n  1\n]\n"},
		{"json of nothing", "json", `[]`, "[]\n"},
		{"table of nothing", "table", `[]`, "(no results)\n"},
		{"table of objects", "table", `[{"name":"alpha","n":1},{"name":"b","x":"multi\nline"}]`,
			// Columns come in the order the keys first appear, as in Lobster.
			"name   n    x         \n-----  ---  ----------\nalpha  1              \nb           multi line\n"},
		{"table of scalars", "table", `["a",1,null,{"k":1}]`, "a\n1\n\n{\"k\":1}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			items, rendered, err := runPipe(t, tc.pipeline, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			if items != "[]" || rendered != tc.want {
				t.Fatalf("items %s, rendered %q; want [] and %q", items, rendered, tc.want)
			}
		})
	}
}
