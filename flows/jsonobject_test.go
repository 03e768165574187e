package flows_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// DecodeJSON and Stringify round-trip documents as JSON.parse and
// JSON.stringify do (the outputs below are what Node prints).
func TestDecodeAndStringifyAsJavaScript(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"b":1,"a":2}`:                         `{"b":1,"a":2}`,
		`{"b":1,"10":2,"a":3,"2":4,"01":5}`:     `{"2":4,"10":2,"b":1,"a":3,"01":5}`,
		`{"a":1,"b":2,"a":3}`:                   `{"a":3,"b":2}`,
		`{"4294967295":1,"4294967294":2}`:       `{"4294967294":2,"4294967295":1}`,
		` [ -0 , 1e-7, 1e21, 0.5, 123456789 ] `: `[0,1e-7,1e+21,0.5,123456789]`,
		`"<&>\u2028\t\u0001é\ud83d\ude00"`:      "\"<&>\u2028\\t\\u0001é😀\"",
		`[1e400]`:                               `[null]`,
		`{}`:                                    `{}`,
		`[[],{}]`:                               `[[],{}]`,
	} {
		v, err := flows.DecodeJSON([]byte(in))
		require.NoError(t, err, in)
		require.Equal(t, want, flows.Stringify(v), in)
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.5`, `tru`, `"a`, "\"\x01\"", `[1] 2`, `{"a":1,}`} {
		_, err := flows.DecodeJSON([]byte(bad))
		var syntax *json.SyntaxError
		require.ErrorAs(t, err, &syntax, "%q", bad)
	}
}

func TestObjectKeepsJavaScriptOrder(t *testing.T) {
	t.Parallel()
	o := flows.NewObject(0)
	for i, k := range []string{"z", "3", "a", "1", "b", "20", "c", "d", "e", "f", "g", "h", "i", "0"} {
		o.Set(k, float64(i))
	}
	o.Set("z", "again")
	require.Equal(t, []string{"0", "1", "3", "20", "z", "a", "b", "c", "d", "e", "f", "g", "h", "i"}, o.Keys())
	v, ok := o.Get("z")
	require.True(t, ok)
	require.Equal(t, "again", v)
	c := o.Clone()
	c.Set("new", 1.0)
	require.Equal(t, 14, o.Len(), "a clone's keys are its own")
	require.Equal(t, `{"0":13,"1":3,"3":1,"20":5,"z":"again","a":2,"b":4,"c":6,"d":7,"e":8,"f":9,"g":10,"h":11,"i":12}`, flows.Stringify(o))
	require.Equal(t, "{\n  \"a\": [\n    1,\n    {}\n  ]\n}", flows.StringifyIndent(mustDecode(t, `{"a":[1,{}]}`), "  "))

	// encoding/json writes an Object in its order too.
	b, err := json.Marshal([]any{mustDecode(t, `{"y":1,"x":{"q":2,"p":3}}`)})
	require.NoError(t, err)
	require.Equal(t, `[{"y":1,"x":{"q":2,"p":3}}]`, string(b))
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := flows.DecodeJSON([]byte(s))
	require.NoError(t, err)
	return v
}

// FuzzDecodeJSON checks DecodeJSON accepts exactly what encoding/json
// accepts, and that what it decodes writes back as JSON that decodes to
// the same text.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2,{"c":null}]}`, `"\u00e9"`, `-1.5e3`, `[`, `{"1":1,"0":0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := flows.DecodeJSON(data)
		if (err == nil) != json.Valid(data) {
			t.Fatalf("DecodeJSON error %v, json.Valid %v, for %q", err, json.Valid(data), data)
		}
		if err != nil {
			return
		}
		s := flows.Stringify(v)
		again, err := flows.DecodeJSON([]byte(s))
		if err != nil || flows.Stringify(again) != s {
			t.Fatalf("%q wrote %q, which does not read back the same (%v)", data, s, err)
		}
	})
}
