package flows

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// applyFilter applies one template filter, f[0] with arguments f[1:], the
// way Lobster's filters do (lobster-format §14.3, template).
func applyFilter(v any, f []string) (any, error) {
	arg := func(i int) (string, bool) {
		if i < len(f) {
			return f[i], true
		}
		return "", false
	}
	str := func() string { return jsString(defined(v)) }
	if v == nil || v == undefined {
		str = func() string { return "" }
	}
	switch f[0] {
	case "upper":
		return strings.ToUpper(str()), nil
	case "lower":
		return strings.ToLower(str()), nil
	case "trim":
		return strings.TrimSpace(str()), nil
	case "truncate":
		s, n := str(), jsParseInt(arg(1))
		if n == 0 {
			n = 80
		}
		if units := utf16.Encode([]rune(s)); len(units) > n {
			return utf16Slice(units, n) + "...", nil
		}
		return s, nil
	case "replace":
		from, _ := arg(1)
		to, _ := arg(2)
		return strings.ReplaceAll(str(), from, to), nil
	case "split":
		sep, ok := arg(1)
		if !ok {
			sep = ","
		}
		var out []any
		for _, p := range strings.Split(str(), sep) {
			out = append(out, p)
		}
		return out, nil
	case "first", "last":
		if a, ok := v.([]any); ok {
			if len(a) == 0 {
				return undefined, nil
			}
			if f[0] == "first" {
				return a[0], nil
			}
			return a[len(a)-1], nil
		}
		return v, nil
	case "length":
		switch t := v.(type) {
		case []any:
			return float64(len(t)), nil
		case string:
			return float64(len(utf16.Encode([]rune(t)))), nil
		}
		return 0.0, nil
	case "join":
		a, ok := v.([]any)
		if !ok {
			return str(), nil
		}
		sep, ok := arg(1)
		if !ok {
			sep = ", "
		}
		parts := make([]string, len(a))
		for i, e := range a {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, sep), nil
	case "json":
		if v == undefined {
			return undefined, nil
		}
		return StringifyIndent(v, "  "), nil
	case "string":
		return str(), nil
	case "default":
		if v == nil || v == undefined || v == "" {
			if d, ok := arg(1); ok {
				return d, nil
			}
			return undefined, nil
		}
		return v, nil
	case "round":
		return roundFilter(v, jsParseInt(arg(1)))
	case "date":
		fmtStr, _ := arg(1)
		return dateFilter(v, fmtStr), nil
	}
	return nil, errors.New("Unknown template filter: " + f[0])
}

var parseIntRE = regexp.MustCompile(`^\s*[+-]?\d+`)

// jsParseInt is parseInt(s) || 0: the leading integer, 0 when there is none.
func jsParseInt(s string, ok bool) int {
	m := parseIntRE.FindString(s)
	if !ok || m == "" {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(m))
	if err != nil {
		return 0
	}
	return n
}

// utf16Slice is JavaScript's s.slice(0, n) over UTF-16 units (a negative n
// counts from the end).
func utf16Slice(units []uint16, n int) string {
	if n < 0 {
		n = max(len(units)+n, 0)
	}
	return string(utf16.Decode(units[:min(n, len(units))]))
}

// roundFilter is Number(Number(v).toFixed(dec)): halves round away from
// zero, on the exact binary value, and non-numbers pass through.
func roundFilter(v any, dec int) (any, error) {
	x := jsToNumber(defined(v))
	if math.IsNaN(x) {
		return v, nil
	}
	if dec < 0 || dec > 100 {
		return nil, fmt.Errorf("round: toFixed() digits argument must be between 0 and 100 (got %d)", dec)
	}
	if math.IsInf(x, 0) || math.Abs(x) >= 1e21 {
		return x, nil
	}
	scaled := new(big.Float).SetPrec(4096).SetFloat64(math.Abs(x))
	scale := new(big.Float).SetPrec(4096).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil))
	scaled.Mul(scaled, scale).Add(scaled, big.NewFloat(0.5))
	n, _ := scaled.Int(nil)
	r, _ := new(big.Float).SetPrec(4096).Quo(new(big.Float).SetInt(n), scale).Float64()
	if x < 0 {
		r = -r
	}
	return r, nil
}

var digitsRE = regexp.MustCompile(`^\d+$`)

// dateFilter formats a date in UTC: v is milliseconds since the epoch (a
// number or a string of digits) or a date string; fmt replaces the first
// YYYY, MM, DD, HH, mm and ss; no fmt gives the ISO form. A value that is
// not a date comes back as its string form.
func dateFilter(v any, format string) any {
	var t time.Time
	valid := false
	switch x := v.(type) {
	case float64:
		t, valid = msTime(x)
	case string:
		if digitsRE.MatchString(strings.TrimSpace(x)) {
			t, valid = msTime(jsToNumber(x))
		} else {
			t, valid = parseJSDate(x)
		}
	}
	if !valid {
		return jsString(defined(v))
	}
	if format == "" {
		return t.Format("2006-01-02T15:04:05.000Z")
	}
	for _, r := range []struct {
		tok string
		val string
	}{
		{"YYYY", strconv.Itoa(t.Year())},
		{"MM", fmt.Sprintf("%02d", int(t.Month()))},
		{"DD", fmt.Sprintf("%02d", t.Day())},
		{"HH", fmt.Sprintf("%02d", t.Hour())},
		{"mm", fmt.Sprintf("%02d", t.Minute())},
		{"ss", fmt.Sprintf("%02d", t.Second())},
	} {
		format = strings.Replace(format, r.tok, r.val, 1)
	}
	return format
}

// msTime is new Date(ms) in UTC, invalid outside JavaScript's range.
func msTime(ms float64) (time.Time, bool) {
	if math.IsNaN(ms) || math.Abs(ms) > 8.64e15 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(ms)).UTC(), true
}

// parseJSDate reads the date strings new Date() reads reliably: ISO 8601
// date-times (a missing zone is local time in JavaScript; here UTC, as
// flowgate runs without a local zone) and bare dates (UTC).
func parseJSDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02", time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
