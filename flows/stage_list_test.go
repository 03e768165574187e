package flows_test

import "testing"

func TestPickStage(t *testing.T) {
	t.Parallel()
	runStageCases(t, []stageCase{
		{"projects and omits missing", "pick 'id, title'", `[{"id":1,"title":"a","x":2},{"id":2}]`, `[{"id":1,"title":"a"},{"id":2}]`},
		{"non-objects pass through", "pick id", `[1,"s",null,true]`, `[1,"s",null,true]`},
		// Arrays are objects in JavaScript: a field is an index.
		{"arrays project by index", "pick 0", `[["a","b"]]`, `[{"0":"a"}]`},
		{"fields are keys, not paths", "pick a.b", `[{"a":{"b":1},"a.b":2}]`, `[{"a.b":2}]`},
		{"only the first positional", "pick id name", `[{"id":1,"name":"n"}]`, `[{"id":1}]`},
		{"requires fields", "pick", `[]`, "error: pick requires a comma-separated field list"},
	})
}

func TestHeadStage(t *testing.T) {
	t.Parallel()
	in := `[1,2,3,4,5,6,7,8,9,10,11,12]`
	runStageCases(t, []stageCase{
		{"default 10", "head", in, `[1,2,3,4,5,6,7,8,9,10]`},
		{"--n", "head --n 2", in, `[1,2]`},
		{"--n=", "head --n=0", in, `[]`},
		{"more than there are", "head --n 50", `[1,2]`, `[1,2]`},
		// Lobster keeps items while their index is below n.
		{"fraction rounds up", "head --n 2.5", in, `[1,2,3]`},
		{"bare --n is 1", "head --n", in, `[1]`},
		{"negative", "head --n -1", in, "error: head --n must be a non-negative number"},
		{"not a number", "head --n x", in, "error: head --n must be a non-negative number"},
	})
}

func TestSortStage(t *testing.T) {
	t.Parallel()
	runStageCases(t, []stageCase{
		{"numbers numerically", "sort", `[10,9,1]`, `[1,9,10]`},
		{"strings by code unit", "sort", `["b","B","a","10","9"]`, `["10","9","B","a","b"]`},
		{"non-numbers compare as strings", "sort", `[true,"a",false]`, `["a",false,true]`},
		{"null and missing last", "sort --key k", `[{"k":null,"i":1},{"i":2},{"k":2},{"k":1}]`, `[{"k":1},{"k":2},{"k":null,"i":1},{"i":2}]`},
		{"stable", "sort --key k", `[{"k":1,"i":1},{"k":0},{"k":1,"i":2}]`, `[{"k":0},{"k":1,"i":1},{"k":1,"i":2}]`},
		// --desc negates the comparison: nulls first, ties keep their order.
		{"desc puts nulls first, ties stable", "sort --key k --desc", `[{"k":1,"i":1},{"k":null},{"k":2},{"k":1,"i":2}]`, `[{"k":null},{"k":2},{"k":1,"i":1},{"k":1,"i":2}]`},
		{"dotted key", "sort --key a.b", `[{"a":{"b":2}},{"a":{"b":1}}]`, `[{"a":{"b":1}},{"a":{"b":2}}]`},
		// Any truthy value is set: "--desc=false" still sorts descending.
		{"--desc=false is still set", "sort --desc=false", `[1,2]`, `[2,1]`},
	})
}

func TestDedupeStage(t *testing.T) {
	t.Parallel()
	runStageCases(t, []stageCase{
		{"whole item, keeps first", "dedupe", `[1,"1",1,{"a":1},{"a":1},null,null]`, `[1,"1",{"a":1},null]`},
		{"by key", "dedupe --key id", `[{"id":1,"v":"a"},{"id":1,"v":"b"},{"id":2}]`, `[{"id":1,"v":"a"},{"id":2}]`},
		{"missing keys are one identity", "dedupe --key id", `[{"v":1},{"v":2},{"id":null}]`, `[{"v":1},{"id":null}]`},
	})
}

func TestGroupByStage(t *testing.T) {
	t.Parallel()
	runStageCases(t, []stageCase{
		{"first appearance order", "groupBy --key s", `[{"s":"b","i":1},{"s":"a"},{"s":"b","i":2}]`,
			`[{"key":"b","items":[{"s":"b","i":1},{"s":"b","i":2}],"count":2},{"key":"a","items":[{"s":"a"}],"count":1}]`},
		// 1 and "1" are different groups (JSON text identity).
		{"identity is JSON text", "groupBy --key s", `[{"s":1},{"s":"1"}]`,
			`[{"key":1,"items":[{"s":1}],"count":1},{"key":"1","items":[{"s":"1"}],"count":1}]`},
		{"missing key leaves key out", "groupBy --key s", `[{"x":1}]`, `[{"items":[{"x":1}],"count":1}]`},
		{"requires --key", "groupBy", `[]`, "error: groupBy requires --key"},
	})
}

func TestMapStage(t *testing.T) {
	t.Parallel()
	runStageCases(t, []stageCase{
		{"wrap", "map --wrap item", `[1,{"a":1}]`, `[{"item":1},{"item":{"a":1}}]`},
		{"unwrap", "map --unwrap a", `[{"a":1},{"b":2},3]`, `[1,null,null]`},
		{"assignments with templates", "map id={{n}} tag=x all={{.}}", `[{"n":1}]`, `[{"n":1,"id":"1","tag":"x","all":"{\"n\":1}"}]`},
		{"non-objects become {value}", "map k={{this}}", `["s",[1]]`, `[{"value":"s","k":"s"},{"value":[1],"k":"[1]"}]`},
		{"missing renders empty", "map k=<{{nope}}>", `[{}]`, `[{"k":"<>"}]`},
		{"wrap then assign from the item", "map --wrap w k={{a}}", `[{"a":"x"}]`, `[{"w":{"a":"x"},"k":"x"}]`},
		{"tokens without = are ignored", "map foo", `[1]`, `[1]`},
		{"both", "map --wrap a --unwrap b", `[]`, "error: map cannot use both --wrap and --unwrap"},
	})
}
