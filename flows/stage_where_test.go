package flows_test

import "testing"

// TestWhereLooseComparison pins Lobster's `where`: JavaScript's loose ==
// and relational operators between an item's field and a coerced literal.
func TestWhereLooseComparison(t *testing.T) {
	t.Parallel()
	in := `[{"v":1},{"v":"1"},{"v":""},{"v":false},{"v":true},{"v":null},{"v":"0"},{"v":0},{"v":"abc"},{},{"v":[1]},{"v":{"a":1}},{"v":"10"},{"v":2}]`
	runStageCases(t, []stageCase{
		{"number literal equals number and numeric string", "where v==1", in, `[{"v":1},{"v":"1"},{"v":true},{"v":[1]}]`},
		{"= is ==", "where v=1", in, `[{"v":1},{"v":"1"},{"v":true},{"v":[1]}]`},
		// "" == false, "0" == false, 0 == false: both sides become numbers.
		{"false literal", "where v==false", in, `[{"v":""},{"v":false},{"v":"0"},{"v":0}]`},
		{"true literal equals 1", "where v==true", in, `[{"v":1},{"v":"1"},{"v":true},{"v":[1]}]`},
		// null == undefined, so a missing field matches null; nothing else does.
		{"null matches null and missing", "where v==null", in, `[{"v":null},{}]`},
		{"!= is not ==", "where v!=null", `[{"v":null},{},{"v":0}]`, `[{"v":0}]`},
		{"string literal", "where v==abc", in, `[{"v":"abc"}]`},
		{"object is [object Object]", "where 'v==[object Object]'", in, `[{"v":{"a":1}}]`},
		// null < 1 (null is 0); undefined and "abc" are NaN and never compare.
		{"less than coerces", "where v<1", in, `[{"v":""},{"v":false},{"v":null},{"v":"0"},{"v":0}]`},
		{"greater or equal", "where v>=2", in, `[{"v":"10"},{"v":2}]`},
		{"string field vs number literal is numeric", "where v>9", `[{"v":"10"},{"v":"9"}]`, `[{"v":"10"}]`},
		// Both sides strings: code-unit order, so "10" < "9".
		{"string literal compares as string", "where v<9x", `[{"v":"10"},{"v":"9z"}]`, `[{"v":"10"}]`},
		{"<= and NaN", "where v<=0", `[{"v":0},{"v":"x"},{}]`, `[{"v":0}]`},
		{"> ", "where v>0", `[{"v":1},{"v":-1}]`, `[{"v":1}]`},
		{"dotted path and array index", "where a.b.0==x", `[{"a":{"b":["x"]}},{"a":{"b":"x"}},{"a":1}]`, `[{"a":{"b":["x"]}}]`},
		{"value keeps = signs", "where k=a=b", `[{"k":"a=b"}]`, `[{"k":"a=b"}]`},
		{"numeric literal forms", "where v==1e1", `[{"v":10},{"v":"10"}]`, `[{"v":10},{"v":"10"}]`},
		{"non-objects have no fields", "where v==1", `[1,"v",null]`, `[]`},
		{"no expression", "where", `[]`, "error: where requires an expression (e.g. field=value)"},
		{"invalid expression", "where a~1", `[]`, "error: Invalid where expression: a~1"},
		{"empty value is invalid", "where a=", `[]`, "error: Invalid where expression: a="},
		// Only the first positional token is the expression.
		{"spaced expression", "where a == 1", `[]`, "error: Invalid where expression: a"},
		{"quoted spaced expression", "where 'a == 1'", `[{"a":1}]`, `[{"a":1}]`},
	})
}
