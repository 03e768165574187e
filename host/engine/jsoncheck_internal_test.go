package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tokenOutOfRange is what outOfRange did before it scanned bytes: decode
// every token and parse every number. The scanner must agree with it.
func tokenOutOfRange(b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if n, ok := tok.(json.Number); ok {
			if _, err := strconv.ParseFloat(string(n), 64); err != nil {
				return string(n)
			}
		}
	}
}

var outOfRangeCases = []string{
	`{"n":1e999}`, `[1,2,-1E+400]`, `{"a":"1e999","b":2}`, `"\"1e999\\"`, `{"k\"1e999":[0.5e308,1.7976931348623157e308]}`,
	`1.7976931348623159e308`, `-1.8e308`, `1e-999`, `{"deep":[[[{"x":[1e309]}]]]}`, `0`, `-0.0`, `null`, `true`,
	`"\u00e9 9e999 \\"`, `[` + strings.Repeat("9", 308) + `]`, `[` + strings.Repeat("9", 309) + `]`,
	`[-` + strings.Repeat("9", 309) + `.5]`, `[0.` + strings.Repeat("9", 400) + `]`, `{"a":{"b":"c"},"d":[1e2,1E3]}`,
}

// outOfRange finds the first number that overflows a float64 where a
// token decoder finds it, and nothing in strings or keys.
func TestOutOfRangeAgreesWithATokenDecoder(t *testing.T) {
	t.Parallel()
	for _, c := range outOfRangeCases {
		require.True(t, json.Valid([]byte(c)), c)
		require.Equal(t, tokenOutOfRange([]byte(c)), outOfRange([]byte(c)), c)
	}
	require.Equal(t, "1e999", outOfRange([]byte(`{"n":1e999}`)))
	require.Equal(t, "", outOfRange([]byte(`{"a":"1e999"}`)))
}

func FuzzOutOfRange(f *testing.F) {
	for _, c := range outOfRangeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if got, want := outOfRange(b), tokenOutOfRange(b); got != want {
			t.Fatalf("outOfRange(%q) = %q, a token decoder finds %q", b, got, want)
		}
	})
}
